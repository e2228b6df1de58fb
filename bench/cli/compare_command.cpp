#include <iostream>
#include <memory>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "core/error.hpp"
#include "report/compare.hpp"
#include "report/gbench_json.hpp"
#include "report/reader.hpp"
#include "report/report_kind.hpp"

namespace embscale::cli {

int compare_command(const CompareOptions& command_options) {
  CompareOptions options = command_options;
  if (!options.gate_names.empty()) options.settings.gate = report::parse_gate_selection(options.gate_names);
  const auto base = report::read_comparable(options.base_path);
  const auto next = report::read_comparable(options.new_path);
  // Runs of different kinds have different parameters and would merely fail to pair; say why.
  report::require_one_kind({{options.base_path, base.kind()}, {options.new_path, next.kind()}}, "compare");
  const auto comparison = [&] {
    try {
      return report::compare_reports(base, next, options.settings);
    } catch (const InputError& e) {
      throw InputError(options.base_path + " vs " + options.new_path + ": " + e.what());
    }
  }();
  if (options.json) std::cout << report::comparison_to_json(comparison, options.settings).dump(2) << '\n';
  else
    std::cout << "base: " << options.base_path << "\nnew:  " << options.new_path << "\n\n"
              << report::format_comparison(comparison, options.settings);
  // A simulation's step is the cost model's prediction: a verdict on it judges the model.
  for (const auto* side : {&base, &next})
    if (side->attributes.count("simulation"))
      std::cerr << "note: " << (side == &base ? options.base_path : options.new_path)
                << " is a simulation (embscale simulate): its counters are exact, its times the cost model's "
                   "predictions, so a change in time here is the model's error, not a regression\n";
  return comparison.any_regression ? 1 : 0;
}

// `embscale compare` (subcommand_registry.hpp).
RunFunction define_compare(CLI::App& command, const Invocation&) {
  auto options = std::make_shared<CompareOptions>();
  report::CompareOptions& settings = options->settings;
  command.add_option("base", options->base_path, "the baseline report")->required();
  command.add_option("new", options->new_path, "the report to judge")->required();
  command
      .add_option("--alpha", settings.alpha,
                  "family-wise significance level: Holm's correction over every gated figure of every paired run")
      ->capture_default_str()
      ->check(CLI::Range(1e-9, 0.5));
  command
      .add_option("--min-change", settings.min_change,
                  "smallest relative change that counts (0.05 = 5%); default 0.05 with repetitions, 0.10 with "
                  "single runs (their tests cannot see run-to-run shifts)")
      ->check(CLI::Range(0.0, 10.0));
  command
      .add_option("--min-auc-change", settings.min_auc_change,
                  "smallest drop of the last evaluation's AUC that counts, in AUC points (0.005 = half a point)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  command
      .add_option("--min-hit-rate-change", settings.min_hit_rate_change,
                  "smallest drop of the dynamic tables' hit rate that counts, in points (0.005 = half a point)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  command.add_option("--blocks", settings.blocks, "block means per run when there are no repetitions")
      ->capture_default_str()
      ->check(CLI::Range(2, 1000));
  command.add_option("--warmup-fraction", settings.warmup_fraction, "leading share of iterations left out")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 0.9));
  command
      .add_option("--gate", options->gate_names,
                  "figures that can fail the verdict: step (step time, throughput; benchmarks: real_time), "
                  "phases, bytes, other, quality (the last evaluation's AUC), hit_rate (the dynamic tables' hits over "
                  "reads), all, none; comma-separated")
      ->delimiter(',')
      ->default_str(report::describe_as_names(report::GateSelection{}));
  command
      .add_option("--ignore", settings.ignored_parameters,
                  "pair runs whose parameters differ only in these (ranks, zipf_alpha, ...), to compare them on "
                  "purpose; comma-separated or repeated")
      ->delimiter(',');
  command.add_flag("--json", options->json, "print the comparison as JSON");
  return [options] { return compare_command(*options); };
}

}  // namespace embscale::cli
