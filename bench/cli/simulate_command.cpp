// `embscale simulate [CONFIG] --ranks P`: a run's key traffic on P virtual ranks in this one
// process (lib/plan/simulation.hpp), counted on the config's own batches; the counts are what a
// run on P ranks records, the times the planner's cost model's. Its report is a run report
// (results/schema.md) of P ranks, with the root attribute `simulation` saying what it is, so
// `report`, `compare` and the plots read it as they read a run.
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <numeric>
#include <optional>

#include "bench/cli/run_report.hpp"
#include "bench/cli/run_setup.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"
#include "core/statistics.hpp"
#include "core/stop_request.hpp"
#include "plan/plan_report.hpp"
#include "plan/planner.hpp"
#include "plan/simulation.hpp"
#include "report/figure_units.hpp"
#include "report/metadata.hpp"
#include "report/writer.hpp"
#include "run/driver_choice.hpp"

namespace embscale::cli {
namespace {

struct SimulateOptions {
  std::optional<std::string> config_path;
  std::optional<std::string> output_path;
  std::vector<std::string> settings;
  int ranks = 0;
  std::int64_t iterations = 0;
  std::int64_t ranks_per_node = 0;
  std::string hardware;
  std::string run_id = "simulation";
  std::string command_line;
};

// The config as a run on `ranks` ranks would take it: --set applied, the batch resolved for the
// count, --hardware as planner.hardware, its "auto" layers planned, the run's checks for the count.
config::Config load_for_simulation(const SimulateOptions& options, std::optional<plan::ShardingPlan>& plan) {
  const std::string origin = options.config_path.value_or("<embedded default>");
  const std::string text =
      options.config_path ? config::read_config_text(*options.config_path) : config::default_config_text();
  auto config = config::parse_config_with_settings(text, origin, options.settings);
  if (options.iterations > 0 || !options.hardware.empty()) {
    // Into the config's JSON, which a plan rewrites and the report records.
    auto json = config.source;
    if (options.iterations > 0) json["solver"]["max_iter"] = options.iterations;
    if (!options.hardware.empty())  // a path given here is the caller's, not the config's
      json["planner"]["hardware"] = std::filesystem::absolute(options.hardware).string();
    config = config::parse_config(json, origin);
  }
  if (options.config_path) config.directory = config::config_directory(*options.config_path);
  config::check_runs_whole(config, true, origin);  // the embedding layers are what it counts
  for (const auto& layer : config.embeddings)
    if (layer.sharding == config::kParameterServerSharding)
      throw InputError(origin + ": layers[" + layer.name + "].sharding: simulate counts the engine's schemes (" +
                       plan::simulated_scheme_names() + "), not a parameter server's traffic");
  config::resolve_batch_for_ranks(config, options.ranks);
  naming_input(origin, [&] {
    plan = plan::plan_for_run(config, options.ranks);
    run::check_training_for_ranks(config, options.ranks);
  });
  return config;
}

// Sums over iterations, per rank, of the counters named `suffix` (every layer's).
std::vector<double> per_rank_sums(const plan::Simulation& sim, const std::string& suffix) {
  std::vector<double> sums(static_cast<std::size_t>(sim.ranks), 0.0);
  for (const auto& [name, values] : sim.counters)
    if (name == suffix || name.ends_with("." + suffix))
      for (std::size_t k = 0; k < values.size(); ++k) sums[k % sums.size()] += static_cast<double>(values[k]);
  return sums;
}

double max_over_mean(const std::vector<double>& values) {
  double max = 0.0, sum = 0.0;
  for (const double v : values) {
    max = std::max(max, v);
    sum += v;
  }
  return sum > 0 ? max / (sum / static_cast<double>(values.size())) : 1.0;
}

double total(const std::vector<double>& values) { return std::accumulate(values.begin(), values.end(), 0.0); }

// The /summary row of a run (run_report.hpp's columns) from the simulation's counts and predicted
// steps; final_loss is NaN (nothing is trained).
report::SummaryRow simulation_summary_row(const std::string& id, const config::Config& config,
                                          const plan::Simulation& sim) {
  const double n = std::max<double>(1.0, static_cast<double>(sim.iterations));
  const double median = quantile(sim.step_time, 0.5);
  const auto keys = per_rank_sums(sim, "keys");
  // The run-wide counter only, as summarize_run does (each phase's <phase>.bytes_sent is a part of it).
  std::vector<double> sent(static_cast<std::size_t>(sim.ranks), 0.0);
  const auto& all_sent = sim.counters.at("bytes_sent");
  for (std::size_t k = 0; k < all_sent.size(); ++k) sent[k % sent.size()] += static_cast<double>(all_sent[k]);
  const double unique = total(per_rank_sums(sim, "unique_keys"));
  const double nan = std::numeric_limits<double>::quiet_NaN();
  report::SummaryRow row{{"run_id", id}};
  for (auto& field : run_parameters(config, sim.ranks)) row.push_back(std::move(field));
  const report::SummaryRow figures{
      {"step_time_median_s", median},
      {"step_time_p95_s", quantile(sim.step_time, 0.95)},
      {"throughput_samples_per_s", median > 0 ? static_cast<double>(sim.global_batch) / median : 0.0},
      {"throughput_keys_per_s", median > 0 ? total(keys) / n / median : 0.0},
      {"bytes_sent_per_step", total(sent) / n},
      {"load_imbalance", max_over_mean(per_rank_sums(sim, "lookups"))},
      {"bytes_imbalance", max_over_mean(sent)},
      {"unique_key_ratio", unique > 0 ? unique / total(keys) : nan},
      {"final_loss", nan},
  };
  row.insert(row.end(), figures.begin(), figures.end());
  return row;
}

std::string describe(const plan::Simulation& sim) {
  std::string text = "embscale simulate: " + std::to_string(sim.ranks) + " ranks counted in one process (" +
                     std::to_string(sim.ranks_per_node) +
                     " per node); the counters are exact, the timings predicted by the planner's cost model";
  return text + (sim.hardware.empty() ? "" : " of " + sim.hardware);
}

int simulate_command(const SimulateOptions& options) {
  install_stop_signal_handlers();
  comm::MpiCommunicator world;
  if (world.size() != 1)
    throw InputError("simulate runs in one process and counts --ranks " + std::to_string(options.ranks) +
                     " itself; it was launched on " + std::to_string(world.size()) + " ranks (run it without mpiexec)");
  if (options.ranks < 1) throw InputError("--ranks: expected at least 1, got " + std::to_string(options.ranks));
  if (options.iterations < 0)
    throw InputError("--iterations: expected a positive count (or none: the config's solver.max_iter), got " +
                     std::to_string(options.iterations));
  if (options.run_id.empty() || options.run_id.find('/') != std::string::npos || options.run_id == ".")
    throw InputError("--id: expected a name without '/', got \"" + options.run_id + "\"");
  if (!options.hardware.empty() && !std::filesystem::is_regular_file(options.hardware))
    throw InputError("--hardware " + options.hardware +
                     ": no such file (a hardware description, bench/hardware/*.json)");
  std::optional<plan::ShardingPlan> plan;
  const config::Config config = load_for_simulation(options, plan);
  if (!config.dense_layers.empty())
    std::cerr << "note: simulate counts the embedding layers; the dense layers' traffic (their gradient allreduce, "
                 "a feature-parallel layer's exchanges) is not in its bytes_sent and bytes_recv, nor their time in "
                 "the step\n";
  const auto sim = plan::simulate(
      config, {.ranks = options.ranks, .iterations = config.solver.max_iter, .ranks_per_node = options.ranks_per_node});

  const std::filesystem::path output = agreed_output_path(world, options.output_path, "simulations");
  auto metadata = report::collect_run_metadata(world, options.command_line, config.source.dump());
  metadata.attributes["ranks"] = std::int64_t{sim.ranks};
  metadata.attributes["simulation"] = describe(sim);
  report::ReportWriter writer(world, output, metadata);
  report::RunRecord record;
  record.id = options.run_id;
  record.parameters = run_parameters(config, sim.ranks);
  record.phase_names = sim.phase_names;
  record.phase_meanings = sim.phase_meanings;
  record.timings = sim.timings;
  record.counters = sim.counters;
  record.series["step_time"] = sim.step_time;
  record.simulated_ranks = sim.ranks;
  if (plan) {
    record.sharding_plan = plan::plan_json(*plan).dump();
    record.tables["plan/loads"] = plan::plan_loads_table(*plan);
  }
  writer.write_run(record);
  const std::vector<report::SummaryRow> summary{simulation_summary_row(options.run_id, config, sim)};
  writer.write_summary(summary);
  writer.commit();

  std::cout << describe(sim) << "\n"
            << run::scheme_names(config) << ", " << sim.iterations << " iterations of " << sim.global_batch
            << " samples\n\n"
            << report::format_summary_table(summary) << "\nreport: " << output.string() << '\n';
  return 0;
}

}  // namespace

RunFunction define_simulate(CLI::App& command, const Invocation& invocation) {
  struct Parsed {
    SimulateOptions options;
    std::string config, output;
  };
  auto parsed = std::make_shared<Parsed>();
  command.add_option("config", parsed->config, "config JSON file (default: the embedded default config)");
  command.add_option("--ranks", parsed->options.ranks, "ranks to simulate (any count: 1,024 runs in one process)")
      ->required();
  command.add_option("-o,--output", parsed->output, "report path (default: results/simulations/<UTC timestamp>.h5)");
  command.add_option("--iterations", parsed->options.iterations,
                     "timed iterations to count (default: the config's solver.max_iter)");
  command.add_option("--ranks-per-node", parsed->options.ranks_per_node,
                     "consecutive ranks per node, for the bytes inside and across nodes (default: the hardware "
                     "description's devices per node, else a table_row_wise layer's ranks_per_node, else every "
                     "rank in one node)");
  command.add_option("--hardware", parsed->options.hardware,
                     "a hardware description (bench/hardware/*.json): the cost model's rates and each link's "
                     "bandwidth (planner.hardware)");
  command.add_option("--id", parsed->options.run_id, "the run's name in the report (/runs/<id>)")
      ->capture_default_str();
  command.add_option("--set", parsed->options.settings,
                     "FIELD=VALUE: override a config field, as in `run`; repeatable");
  return [parsed, command_line = invocation.command_line] {
    SimulateOptions& options = parsed->options;
    if (!parsed->config.empty()) options.config_path = parsed->config;
    if (!parsed->output.empty()) options.output_path = parsed->output;
    options.command_line = command_line;
    return simulate_command(options);
  };
}

}  // namespace embscale::cli
