#include <iostream>
#include <memory>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "core/timer.hpp"
#include "report/merge.hpp"
#include "report/reader.hpp"

namespace embscale::cli {

// The merged file describes the merge (its command, time and inputs) and otherwise carries the
// first input's root attributes (version, machine, MPI); every run keeps its own file's
// attributes under /runs/<id>/metadata.
int merge_command(const MergeOptions& options) {
  std::vector<std::filesystem::path> inputs(options.inputs.begin(), options.inputs.end());
  auto attributes = report::read_report(inputs.front()).attributes;
  attributes["command_line"] = options.command_line;
  attributes["created_utc"] = utc_timestamp("%Y-%m-%dT%H:%M:%SZ");
  std::string from;
  for (const auto& input : options.inputs) from += (from.empty() ? "" : "\n") + input;
  attributes["merged_from"] = from;
  report::merge_reports(inputs, options.output_path, attributes);
  const auto merged = report::read_report(options.output_path);
  std::cout << report::format_summary_table(merged.summary) << "\nreport: " << options.output_path << " ("
            << merged.runs.size() << " runs from " << inputs.size() << " files)\n";
  return 0;
}

// `embscale merge` (subcommand_registry.hpp).
RunFunction define_merge(CLI::App& command, const Invocation& invocation) {
  auto options = std::make_shared<MergeOptions>();
  options->command_line = invocation.command_line;
  command.add_option("inputs", options->inputs, "reports to merge, in order")->required();
  command.add_option("-o,--output", options->output_path, "the merged report")->required();
  return [options] { return merge_command(*options); };
}

}  // namespace embscale::cli
