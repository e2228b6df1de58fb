#include "bench/cli/run_setup.hpp"
#include "run/driver_choice.hpp"

#include <cstdlib>

#include "comm/failure.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "run/device_check.hpp"
#include "run/memory_check.hpp"
#include "run/training_run.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::cli {
namespace {

std::string default_output_path(const std::string& folder) {
  std::string name = utc_timestamp("%Y%m%dT%H%M%SZ");
  if (const char* job = std::getenv("SLURM_JOB_ID")) name += std::string("-job") + job;
  // Two runs started in the same second must not overwrite each other.
  const std::string stem = "results/" + folder + "/" + name;
  std::string path = stem + ".h5";
  for (int n = 1; std::filesystem::exists(path); ++n) path = stem + "-" + std::to_string(n) + ".h5";
  return path;
}

}  // namespace

void agree_planner_memory(comm::Communicator& world, config::Config& config) {
  if (!config.planner && !plan::has_auto_layers(config)) return;
  const auto limit = comm::broadcast_strings(world, {std::to_string(plan::default_memory_per_rank(world.size()))})[0];
  if (!config.planner) config.planner.emplace();
  if (config.planner->memory_per_rank == 0) config.planner->memory_per_rank = std::stoll(limit);
}

AgreedConfig load_config_agreed(comm::Communicator& world, const std::optional<std::string>& path,
                                const std::vector<std::string>& settings, bool embedding_only,
                                const std::function<void(config::Config&)>& adjust) {
  std::string text;
  if (path)
    comm::run_agreed(world, [&] {
      if (world.rank() == 0) text = config::read_config_text(*path);
    });
  text = comm::broadcast_strings(world, {text})[0];
  std::optional<config::Config> config;
  std::unique_ptr<BatchSource> source;
  std::optional<plan::ShardingPlan> plan;
  comm::run_agreed(world, [&] {
    const std::string origin = path.value_or("<embedded default>");
    config = config::parse_config_with_settings(path ? text : config::default_config_text(), origin, settings);
    if (path) config->directory = config::config_directory(*path);
    config::check_runs_whole(*config, embedding_only, origin);
    if (embedding_only) config::keep_embedding_part(*config);
    if (adjust) adjust(*config);
    config::resolve_batch_for_ranks(*config, world.size());
  });
  const std::int64_t given_memory_per_rank = config->planner ? config->planner->memory_per_rank : 0;
  agree_planner_memory(world, *config);
  // The hosts: the GPUs and the memory each rank may take are per host (a collective).
  const auto placement = run::place_on_hosts(world);
  comm::run_agreed(world, [&] {
    // A machine without the GPU a config asks for is the first thing to hear of.
    run::check_devices(*config, placement, world.size());
    naming_input(path.value_or("<embedded default>"), [&] {
      plan = plan::plan_for_run(*config, world.size());
      run::check_training_for_ranks(*config, world.size());
      run::check_host_memory(
          *config, world.size(), world.rank(),
          run::memory_share(given_memory_per_rank, run::node_available_memory(), placement.ranks_here(world.size())));
    });
    run::check_run_environment();
    // A trace that cannot be read, or is too short for warmup_iter + max_iter batches, is bad
    // input too.
    source = workloads::make_batch_source(*config);
    // Every sample the run reads, read once now by one rank (data.trace_check): a damaged record
    // fails the run here, reported once, not when the run reaches it.
    if (world.rank() == 0) (void)workloads::check_run_samples(*config);
  });
  return {std::move(*config), std::move(source), std::move(plan)};
}

std::filesystem::path agreed_output_path(comm::Communicator& world, const std::optional<std::string>& given,
                                         const std::string& folder) {
  const bool root = world.rank() == 0;
  std::filesystem::path output =
      comm::broadcast_strings(world, {root ? given.value_or(default_output_path(folder)) : ""})[0];
  if (!given) {
    comm::run_agreed(world, [&] {
      std::error_code ec;
      if (root) std::filesystem::create_directories(output.parent_path(), ec);
      if (ec) throw InputError(output.parent_path().string() + ": cannot create the report directory: " + ec.message());
    });
  }
  return output;
}

}  // namespace embscale::cli
