#include <iostream>
#include <memory>
#include <optional>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "embedding/engine.hpp"
#include "model/dense_graph.hpp"
#include "plan/planner.hpp"
#include "run/checkpoint.hpp"
#include "run/device_check.hpp"
#include "run/driver_choice.hpp"
#include "run/memory_check.hpp"
#include "run/online_dumps.hpp"
#include "workloads/workload_description.hpp"

namespace embscale::cli {
namespace {

// What `run` checks before its first step, in the order it does: the checks that hold on any
// number of ranks, and with `ranks` those that depend on them (the batch per rank, a planned
// layer's plan, each scheme's placement and the rows the fullest rank holds, the parameter
// server's roles). Returns what was not checked, for the output.
std::string check_as_run_would(config::Config& config, const std::string& config_path, std::optional<int> ranks,
                               std::optional<int> ranks_per_node) {
  naming_input(config_path, [&] {
    run::check_device_support(config);
    if (!config::runs_on_parameter_servers(config)) embedding::check_layers(config, config.data.slot_size_array);
    model::check_dense_graph(config, ranks.value_or(1));
    run::check_incremental_dumps(config);
    run::check_checkpoints(config);
    if (!ranks) return;
    config::resolve_batch_for_ranks(config, *ranks);
    plan::plan_for_run(config, *ranks);
    run::check_training_for_ranks(config, *ranks);
    // The fullest rank's tables against this machine's memory, shared by the ranks of a node.
    const std::int64_t given = config.planner ? config.planner->memory_per_rank : 0;
    run::check_host_memory(config, *ranks, std::nullopt,
                           run::memory_share(given, run::node_available_memory(), ranks_per_node.value_or(*ranks)));
  });
  return ranks ? ""
               : "what depends on the ranks (give --ranks N): the batch per rank, the placement, rows and memory per "
                 "rank";
}

}  // namespace

int validate_command(const std::string& config_path, bool embedding_only, std::optional<int> ranks,
                     std::optional<int> ranks_per_node) {
  auto config = config::load_config_file(config_path);
  config::check_runs_whole(config, embedding_only, config_path);  // as `run` would refuse it
  if (embedding_only) config::keep_embedding_part(config);
  const std::string unchecked = check_as_run_would(config, config_path, ranks, ranks_per_node);
  std::cout << config_path << ": valid (schema version " << config.schema_version << ")";
  if (ranks) std::cout << " on " << *ranks << (*ranks == 1 ? " rank" : " ranks");
  std::cout << '\n';
  if (!unchecked.empty()) std::cout << "  not checked: " << unchecked << '\n';
  if (!config.not_run.empty())
    std::cout << "  not run (--embedding-only): " << config::describe_not_run(config) << '\n';
  if (!config.not_used.empty()) std::cout << "  accepted and not used: " << config::describe_not_used(config) << '\n';
  std::cout << "  data: " << config::to_string(config.data.format) << ", " << config.data.slot_num << " slots";
  if (config.data.format != config::DataFormat::kSynthetic)
    std::cout << ", source " << config::data_source_path(config).string();
  std::cout << '\n';
  if (config.data.format == config::DataFormat::kSynthetic) workloads::print_synthetic_slots(std::cout, config.data);
  if (!config.dense_layers.empty()) std::cout << "  dense: " << config.dense_layers.size() << " layers\n";
  for (const auto& emb : config.embeddings)
    std::cout << "  " << emb.name << ": " << emb.type << ", dim " << emb.embedding_vec_size << ", combiner "
              << config::to_string(emb.combiner) << '\n';
  if (config::runs_on_gpu(config))
    std::cout << "  device: gpu over "
              << (config.solver.communicator == config::DeviceExchange::kNccl ? "NCCL (one rank per GPU)"
                                                                              : "MPI staged through host memory")
              << "; the GPUs are checked when the run starts, on the nodes that run it\n";
  std::cout << "  solver: batchsize " << config.solver.batchsize << ", " << config.solver.max_iter << " iterations (+"
            << config.solver.warmup_iter << " warm-up)\n";
  return 0;
}

// `embscale validate` (subcommand_registry.hpp).
RunFunction define_validate(CLI::App& command, const Invocation&) {
  struct Parsed {
    std::string path;
    bool embedding_only = false;
    std::optional<int> ranks;
    std::optional<int> ranks_per_node;
  };
  auto parsed = std::make_shared<Parsed>();
  command.add_option("config", parsed->path, "config JSON file")->required();
  command.add_flag("--embedding-only", parsed->embedding_only,
                   "accept a config embscale runs only in part (a HugeCTR file's dense layers, evaluation, ...), "
                   "as `run --embedding-only` does");
  command
      .add_option(
          "--ranks", parsed->ranks,
          "also check what depends on the number of ranks, as `run` on N ranks would: the batch per rank, "
          "a planned layer's plan, each scheme's placement, the rows and the host memory the fullest rank holds")
      ->check(CLI::PositiveNumber);
  command
      .add_option("--ranks-per-node", parsed->ranks_per_node,
                  "with --ranks: the ranks that share a node's memory (default: all N on this machine); each "
                  "rank's tables are checked against its share of this machine's available memory")
      ->check(CLI::PositiveNumber)
      ->needs("--ranks");
  return [parsed] {
    return validate_command(parsed->path, parsed->embedding_only, parsed->ranks, parsed->ranks_per_node);
  };
}

}  // namespace embscale::cli
