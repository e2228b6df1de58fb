// embscale: one binary, subcommands (DESIGN.md "CLI"). `run` is the MPI program; `validate` and
// `report` are serial and never initialise MPI.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "bench/cli/commands.hpp"
#include "comm/failure.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"

namespace {

std::string join_arguments(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  return line;
}

// Serial subcommands: print the error once and return its exit code.
int run_serial(const std::function<int()>& command) {
  try {
    return command();
  } catch (const embscale::Error& e) {
    std::fprintf(stderr, "embscale: error: %s\n", e.what());
    return e.exit_code();
  }
}

// The MPI subcommand: agreed failures exit cleanly with their code; anything else aborts all ranks.
int run_mpi(int argc, char** argv, const std::function<int()>& command) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int code = 0;
  try {
    code = command();
  } catch (const embscale::comm::AgreedFailure& failure) {
    code = failure.exit_code;
  } catch (const embscale::Error& e) {
    embscale::comm::abort_all_ranks(e.exit_code(), e.what());
  } catch (const std::exception& e) {
    embscale::comm::abort_all_ranks(embscale::kExitFailure, e.what());
  }
  MPI_Finalize();
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"embscale: measure and predict distributed embedding tables at scale"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string(embscale::build_info::version()) + " (" + embscale::build_info::git_sha() + ")");

  embscale::cli::RunOptions run_options;
  std::string config_arg, output_arg;
  auto* run = app.add_subcommand("run", "Run a config (no CONFIG: the embedded default) and write an HDF5 report");
  run->add_option("config", config_arg, "config JSON file");
  run->add_option("-o,--output", output_arg, "report path (default: results/runs/<UTC timestamp>.h5)");
  run->add_flag("-q,--quiet", run_options.quiet, "no progress lines");

  std::string validate_path;
  auto* validate = app.add_subcommand("validate", "Check a config file and print what it runs");
  validate->add_option("config", validate_path, "config JSON file")->required();

  std::string report_path;
  auto* report = app.add_subcommand("report", "Print the summary of an existing report");
  report->add_option("report", report_path, "report HDF5 file")->required();

  embscale::cli::CompareOptions compare_options;
  auto* compare = app.add_subcommand("compare", "Compare two reports: per-figure change, significance, exit 1 on a regression");
  compare->add_option("base", compare_options.base_path, "the baseline report")->required();
  compare->add_option("new", compare_options.new_path, "the report to judge")->required();
  compare->add_option("--alpha", compare_options.settings.alpha, "significance level of the one-sided Mann-Whitney test")
      ->capture_default_str()->check(CLI::Range(1e-9, 0.5));
  compare->add_option("--min-change", compare_options.settings.min_change, "smallest relative change that counts (0.05 = 5%)")
      ->capture_default_str()->check(CLI::Range(0.0, 10.0));
  compare->add_option("--blocks", compare_options.settings.blocks, "block means per run when there are no repetitions")
      ->capture_default_str()->check(CLI::Range(2, 1000));
  compare->add_option("--warmup-fraction", compare_options.settings.warmup_fraction, "leading share of iterations left out")
      ->capture_default_str()->check(CLI::Range(0.0, 0.9));
  compare->add_flag("--json", compare_options.json, "print the comparison as JSON");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : embscale::kExitBadInput;
  }

  if (*run) {
    if (!config_arg.empty()) run_options.config_path = config_arg;
    if (!output_arg.empty()) run_options.output_path = output_arg;
    run_options.command_line = join_arguments(argc, argv);
    return run_mpi(argc, argv, [&] { return embscale::cli::run_command(run_options); });
  }
  if (*validate) return run_serial([&] { return embscale::cli::validate_command(validate_path); });
  if (*compare) return run_serial([&] { return embscale::cli::compare_command(compare_options); });
  return run_serial([&] { return embscale::cli::report_command(report_path); });
}
