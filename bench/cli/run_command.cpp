#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>

#include "bench/cli/commands.hpp"
#include "bench/cli/run_report.hpp"
#include "bench/cli/run_setup.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "report/disk_space.hpp"
#include "report/figure_units.hpp"
#include "report/metadata.hpp"
#include "report/writer.hpp"
#include "run/driver_choice.hpp"
#include "run/parameter_server_run.hpp"
#include "run/run_devices.hpp"
#include "run/training_run.hpp"

namespace embscale::cli {

int run_command(const RunOptions& options) {
  install_stop_signal_handlers();
  comm::MpiCommunicator world;
  const bool root = world.rank() == 0;

  const auto resume = [&options](config::Config& config) {
    if (options.resume_from)
      config.solver.checkpoint.resume_from =
          std::filesystem::absolute(*options.resume_from).lexically_normal().string();
  };
  auto [config, source, plan] =
      load_config_agreed(world, options.config_path, options.settings, options.embedding_only, resume);
  // A GPU run: each rank takes its GPU (and joins NCCL) before the report exists.
  std::unique_ptr<run::RunDevices> devices;
  if (config::runs_on_gpu(config)) {
    const auto placement = run::place_on_hosts(world);
    comm::run_agreed(world, [&] { devices = run::RunDevices::open(world, placement, config); });
  }
  const std::filesystem::path output = agreed_output_path(world, options.output_path, "runs");

  std::optional<report::ReportWriter> writer;
  comm::run_agreed(world, [&] {
    auto metadata = report::collect_run_metadata(world, options.command_line, config.source.dump());
    if (devices) record_gpu_run(world, *devices, config, metadata);
    writer.emplace(world, output, metadata);
  });
  // The report's disk, claimed before the first step: a disk without room refuses the run now
  // (exit 2) rather than after it, and the claim keeps the room through the run.
  comm::run_agreed(world, [&] {
    writer->claim_space(
        report::expected_report_bytes(1, config.solver.max_iter, world.size(), config.source.dump().size()));
  });

  // What runs, said once: the first line, or with --quiet the start of the only line.
  const std::string what = run::scheme_names(config) + " on " + std::to_string(world.size()) + " ranks";
  if (root && !options.quiet) {
    std::cout << "embscale run: " << what;
    if (config::runs_on_parameter_servers(config)) {
      const auto roles = run::check_parameter_server_run(config, world.size());
      std::cout << " (" << roles.trainers << (roles.trainers == 1 ? " trainer, " : " trainers, ") << roles.servers
                << (roles.servers == 1 ? " server, " : " servers, ")
                << (config.parameter_server->synchronous
                        ? "synchronous"
                        : "asynchronous, staleness " + std::to_string(config.parameter_server->staleness))
                << ")";
    }
    std::cout << ", " << config.solver.max_iter << " iterations of " << config.solver.batchsize << " samples\n";
    if (config.data.format != config::DataFormat::kSynthetic) std::cout << "data: " << source->describe() << '\n';
    if (plan)
      std::cout << "sharding plan (" << plan->policy << "): " << run::scheme_names(config) << ", predicted step "
                << plan->step_seconds * 1e3 << " ms (embscale plan prints it in full)\n";
  }
  if (root && !config.not_run.empty())
    std::cerr << "note: --embedding-only: running the embedding layers; not run: " << config::describe_not_run(config)
              << '\n';
  if (root && !config.not_used.empty())
    std::cerr << "note: accepted and not used: " << config::describe_not_used(config) << '\n';
  // A signal stops the run at an iteration boundary, on every rank, with no report.
  const auto stop_check = [&world] { return comm::any_rank_stopping(world); };
  const auto run =
      run::train(world, config, *source, options.quiet ? nullptr : &std::cout, stop_check, "", devices.get());

  if (root)
    for (const auto& note : run.eviction.notes) std::cerr << "embscale run: " << note << '\n';
  const std::string& id = options.run_id;
  writer->write_run(make_run_record(id, config, world.size(), run, plan ? &*plan : nullptr));
  const std::vector<report::SummaryRow> summary{make_summary_row(id, config, world.size(), run)};
  writer->write_summary(summary);
  writer->commit();

  if (root && options.quiet)
    std::cout << "embscale run: " << what << ", " << run.summary.iterations << " iterations: step "
              << report::format_figure_value("step_time", run.summary.step_time_median_s) << " (median), "
              << report::format_figure_value("throughput_samples_per_s", run.summary.throughput_samples_per_s)
              << "; report: " << output.string() << '\n';
  else if (root) std::cout << '\n' << report::format_summary_table(summary) << "\nreport: " << output.string() << '\n';
  return 0;
}

// `embscale run` (subcommand_registry.hpp): CLI11 binds plain strings, so the optional paths are
// read as strings and left unset when empty.
RunFunction define_run(CLI::App& command, const Invocation& invocation) {
  struct Parsed {
    RunOptions options;
    std::string config, output, resume_from;
    std::vector<std::string> unset;
  };
  auto parsed = std::make_shared<Parsed>();
  command.add_option("config", parsed->config, "config JSON file");
  command.add_option("-o,--output", parsed->output, "report path (default: results/runs/<UTC timestamp>.h5)");
  command.add_flag("-q,--quiet", parsed->options.quiet,
                   "one line on success (what ran, the median step, the throughput, the report); notes and "
                   "warnings still go to stderr");
  command.add_flag("--embedding-only", parsed->options.embedding_only,
                   "run the embedding part of a config that asks for more (a HugeCTR file's dense layers, evaluation, "
                   "checkpoints), listing what is skipped; without it such a config is refused (exit 2)");
  command.add_option("--id", parsed->options.run_id, "the run's name in the report (/runs/<id>)")
      ->capture_default_str();
  command.add_option("--set", parsed->options.settings,
                     "FIELD=VALUE: override a config field, addressed as in sweeps (solver.batchsize=8192, "
                     "layers.emb1.sparse_embedding_hparam.combiner=mean); repeatable");
  command.add_option("--resume-from", parsed->resume_from,
                     "PATH: continue the run from a checkpoint (an iteration-<N> directory solver.checkpoint wrote, "
                     "or its directory: the newest complete one), with the losses it would have had; the same "
                     "config and rank count, max_iter may grow (lib/run/checkpoint.hpp)");
  command.add_option("--unset", parsed->unset,
                     "FIELD: remove a config field, so that its default applies (= --set FIELD=null; "
                     "--set optimizer.type=Adam --unset optimizer.sgd_hparam); repeatable");
  return [parsed, command_line = invocation.command_line] {
    RunOptions& options = parsed->options;
    for (const auto& field : parsed->unset) options.settings.push_back(field + "=null");
    if (!parsed->config.empty()) options.config_path = parsed->config;
    if (!parsed->output.empty()) options.output_path = parsed->output;
    if (!parsed->resume_from.empty()) options.resume_from = parsed->resume_from;
    options.command_line = command_line;
    return run_command(options);
  };
}

}  // namespace embscale::cli
