// embscale: one binary, subcommands (DESIGN.md "CLI"). `run` and `sweep` are MPI programs;
// `validate`, `report`, `compare`, `merge` and `trace` are serial and never initialise MPI.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>

#include "bench/cli/commands.hpp"
#include "bench/cli/trace_options.hpp"
#include "comm/failure.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"

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
  } catch (const embscale::StopRequested& stop) {
    // Agreed by every rank (comm::any_rank_stopping): a clean exit, said once.
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) std::fprintf(stderr, "embscale: %s\n", stop.what());
    code = stop.exit_code();
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
  run->add_option("--id", run_options.run_id, "the run's name in the report (/runs/<id>)")->capture_default_str();
  run->add_option("--set", run_options.settings,
                  "FIELD=VALUE: override a config field, addressed as in sweeps (solver.batchsize=8192, "
                  "layers.emb1.sparse_embedding_hparam.combiner=mean); repeatable");

  embscale::cli::SweepOptions sweep_options;
  auto* sweep = app.add_subcommand(
      "sweep", "Run every point of a sweep file (a grid or a list over config fields), then merge the reports into one");
  sweep->add_option("sweep", sweep_options.sweep_path, "sweep JSON file")->required();
  sweep->add_option("-o,--output", sweep_options.output_path, "merged report; point reports go to <stem>.points/")
      ->required();
  sweep->add_flag("--resume", sweep_options.resume, "go on with the runs the manifest lacks (after a stop or a requeue)");
  sweep->add_flag("-q,--quiet", sweep_options.quiet, "no per-iteration progress lines");
  sweep->add_flag("--dry-run", sweep_options.dry_run, "check every point and print the plan; run and write nothing");
  sweep->footer("Exit codes: 0 done, 1 failure, 2 bad input, 3 stopped by SIGTERM/SIGUSR1 (resume with --resume).");

  embscale::cli::MergeOptions merge_options;
  auto* merge = app.add_subcommand("merge", "Merge reports into one (run ids must be unique across them)");
  merge->add_option("inputs", merge_options.inputs, "reports to merge, in order")->required();
  merge->add_option("-o,--output", merge_options.output_path, "the merged report")->required();

  std::string validate_path;
  auto* validate = app.add_subcommand("validate", "Check a config file and print what it runs");
  validate->add_option("config", validate_path, "config JSON file")->required();

  embscale::cli::ReportOptions report_options;
  auto* report = app.add_subcommand("report", "Print the summary of an existing report, and plot it");
  report->add_option("report", report_options.report_path, "report HDF5 file")->required();
  report->add_option("--plot", report_options.plot_directory, "write PNG plots into this directory");

  embscale::cli::CompareOptions compare_options;
  auto* compare = app.add_subcommand("compare", "Compare two reports: per-figure change, significance, exit 1 on a regression");
  compare->add_option("base", compare_options.base_path, "the baseline report")->required();
  compare->add_option("new", compare_options.new_path, "the report to judge")->required();
  compare->add_option("--alpha", compare_options.settings.alpha,
                      "family-wise significance level: Holm's correction over every gated figure of every paired run")
      ->capture_default_str()->check(CLI::Range(1e-9, 0.5));
  compare->add_option("--min-change", compare_options.settings.min_change, "smallest relative change that counts (0.05 = 5%)")
      ->capture_default_str()->check(CLI::Range(0.0, 10.0));
  compare->add_option("--blocks", compare_options.settings.blocks, "block means per run when there are no repetitions")
      ->capture_default_str()->check(CLI::Range(2, 1000));
  compare->add_option("--warmup-fraction", compare_options.settings.warmup_fraction, "leading share of iterations left out")
      ->capture_default_str()->check(CLI::Range(0.0, 0.9));
  compare->add_option("--gate", compare_options.gate_names,
                      "figures that can fail the verdict: step (step time, throughput; benchmarks: real_time), "
                      "phases, bytes, other, all, none; comma-separated")
      ->delimiter(',')->default_str("step");
  compare->add_option("--ignore", compare_options.settings.ignored_parameters,
                      "pair runs whose parameters differ only in these (ranks, zipf_alpha, ...): compare on purpose; "
                      "comma-separated or repeated")
      ->delimiter(',');
  compare->add_flag("--json", compare_options.json, "print the comparison as JSON");
  compare->footer("Exit codes: 0 no regression, 1 a gated figure regressed, 2 bad input (unreadable report, no runs "
                  "to pair).");

  embscale::cli::TraceSubcommands trace_commands;
  embscale::cli::add_trace_subcommands(app, trace_commands);

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
  if (*sweep) {
    sweep_options.command_line = join_arguments(argc, argv);
    return run_mpi(argc, argv, [&] { return embscale::cli::sweep_command(sweep_options); });
  }
  if (*merge) {
    merge_options.command_line = join_arguments(argc, argv);
    return run_serial([&] { return embscale::cli::merge_command(merge_options); });
  }
  if (*validate) return run_serial([&] { return embscale::cli::validate_command(validate_path); });
  if (*compare) return run_serial([&] { return embscale::cli::compare_command(compare_options); });
  if (trace_commands.chosen()) return run_serial([&] { return trace_commands.run(); });
  return run_serial([&] { return embscale::cli::report_command(report_options); });
}
