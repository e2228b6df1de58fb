#include <mpi.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bench/cli/commands.hpp"
#include "bench/cli/run_report.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/sweep_spec.hpp"
#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "core/timer.hpp"
#include "embedding/training_run.hpp"
#include "report/metadata.hpp"
#include "report/writer.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::cli {
namespace {

// results/runs/<UTC timestamp>[-<slurm job id>].h5, named on rank 0 so every rank agrees.
std::string default_output_path() {
  std::string name = utc_timestamp("%Y%m%dT%H%M%SZ");
  if (const char* job = std::getenv("SLURM_JOB_ID")) name += std::string("-job") + job;
  // Two runs started in the same second must not overwrite each other.
  std::string path = "results/runs/" + name + ".h5";
  for (int n = 1; std::filesystem::exists(path); ++n) path = "results/runs/" + name + "-" + std::to_string(n) + ".h5";
  return path;
}

}  // namespace

int run_command(const RunOptions& options) {
  install_stop_signal_handlers();
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const bool root = world.rank() == 0;

  // Rank 0 reads the config and broadcasts its text: every rank parses the same bytes even if a
  // node sees another file (node-local paths, a file rewritten during the launch).
  std::string text;
  if (options.config_path) comm::run_agreed(world, [&] {
    if (root) text = config::read_config_text(*options.config_path);
  });
  text = comm::broadcast_strings(world, {text})[0];
  std::optional<config::Config> config;
  std::unique_ptr<BatchSource> source;
  comm::run_agreed(world, [&] {
    const std::string origin = options.config_path.value_or("<embedded default>");
    config = config::parse_config_with_settings(options.config_path ? text : config::default_config_text(), origin,
                                                options.settings);
    if (options.config_path) config->directory = config::config_directory(*options.config_path);
    config::check_runs_whole(*config, options.embedding_only, origin);
    config::resolve_batch_for_ranks(*config, world.size());
    embedding::check_config_for_ranks(*config, world.size());
    embedding::check_run_environment();
    // Before the report exists: a trace that cannot be read, or is too short for warmup_iter +
    // max_iter batches, is bad input (exit 2, no report).
    source = workloads::make_batch_source(*config);
  });

  std::filesystem::path output = comm::broadcast_strings(world, {root ? options.output_path.value_or(default_output_path()) : ""})[0];
  if (!options.output_path) {
    comm::run_agreed(world, [&] {
      std::error_code ec;
      if (root) std::filesystem::create_directories(output.parent_path(), ec);
      if (ec) throw InputError(output.parent_path().string() + ": cannot create the report directory: " + ec.message());
    });
  }

  std::optional<report::ReportWriter> writer;
  comm::run_agreed(world, [&] {
    const auto metadata = report::collect_run_metadata(world, options.command_line, config->source.dump());
    writer.emplace(world, output, metadata);
  });

  if (root) {
    std::cout << "embscale run: " << embedding::scheme_names(*config) << " on " << world.size() << " ranks, "
              << config->solver.max_iter << " iterations of " << config->solver.batchsize << " samples\n";
    if (config->data.format != config::DataFormat::kSynthetic) std::cout << "data: " << source->describe() << '\n';
    if (!config->not_run.empty())
      std::cout << "note: --embedding-only: running the embedding layers; not run: " << config::describe_not_run(*config)
                << '\n';
  }
  // A signal stops the run at an iteration boundary, on every rank, with no report.
  const auto stop_check = [&world] { return comm::any_rank_stopping(world); };
  const auto run = embedding::run_training(world, *config, *source, options.quiet ? nullptr : &std::cout, stop_check);

  if (root)
    for (const auto& note : run.eviction.notes) std::cerr << "embscale run: " << note << '\n';
  const std::string& id = options.run_id;
  writer->write_run(make_run_record(id, *config, world.size(), run));
  const std::vector<report::SummaryRow> summary{make_summary_row(id, *config, world.size(), run)};
  writer->write_summary(summary);
  writer->commit();

  if (root) std::cout << '\n' << report::format_summary_table(summary) << "\nreport: " << output.string() << '\n';
  return 0;
}

// `embscale run` (subcommand_registry.hpp): CLI11 binds plain strings, so the optional paths are
// read as strings and left unset when empty.
RunFunction define_run(CLI::App& command, const Invocation& invocation) {
  struct Parsed {
    RunOptions options;
    std::string config, output;
  };
  auto parsed = std::make_shared<Parsed>();
  command.add_option("config", parsed->config, "config JSON file");
  command.add_option("-o,--output", parsed->output, "report path (default: results/runs/<UTC timestamp>.h5)");
  command.add_flag("-q,--quiet", parsed->options.quiet, "no progress lines");
  command.add_flag("--embedding-only", parsed->options.embedding_only,
                   "run the embedding part of a config that asks for more (a HugeCTR file's dense layers, evaluation, "
                   "checkpoints), listing what is skipped; without it such a config is refused (exit 2)");
  command.add_option("--id", parsed->options.run_id, "the run's name in the report (/runs/<id>)")->capture_default_str();
  command.add_option("--set", parsed->options.settings,
                     "FIELD=VALUE: override a config field, addressed as in sweeps (solver.batchsize=8192, "
                     "layers.emb1.sparse_embedding_hparam.combiner=mean); repeatable");
  return [parsed, command_line = invocation.command_line] {
    RunOptions& options = parsed->options;
    if (!parsed->config.empty()) options.config_path = parsed->config;
    if (!parsed->output.empty()) options.output_path = parsed->output;
    options.command_line = command_line;
    return run_command(options);
  };
}

}  // namespace embscale::cli
