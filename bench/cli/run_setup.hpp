// What the MPI subcommands that run a config share before they measure: the config, read on rank 0
// and parsed identically everywhere, and the report path every rank agrees on.
#pragma once

#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch_source.hpp"
#include "plan/planner.hpp"

namespace embscale::cli {

struct AgreedConfig {
  config::Config config;  // planned, when it had "auto" layers
  std::unique_ptr<BatchSource> source;
  std::optional<plan::ShardingPlan> plan;  // plan::plan_for_run's
};

// Collective. Rank 0 reads `path` (none: the embedded default) and broadcasts its text, so every
// rank parses the same bytes even if a node sees another file; then every rank applies the
// --set `settings`, `adjust` (a subcommand's own overrides), plans its "auto" layers (lib/plan),
// applies the checks of a run on this many ranks, and opens the batch source. Bad input throws
// AgreedFailure on every rank (exit 2, printed once), before any report exists.
AgreedConfig load_config_agreed(comm::Communicator& world, const std::optional<std::string>& path,
                                const std::vector<std::string>& settings, bool embedding_only,
                                const std::function<void(config::Config&)>& adjust = nullptr);

// Collective, where `config` plans (an "auto" layer or a "planner" section): sets its planner's
// memory_per_rank, when unset, to rank 0's default, so that every rank plans the same on hosts
// of different sizes (each rank then plans alone: a pure function of the config).
void agree_planner_memory(comm::Communicator& world, config::Config& config);

// Collective: `given`, or results/<folder>/<UTC timestamp>[-job<SLURM_JOB_ID>].h5 named on rank 0
// (never an existing file) with its directory created; the same path on every rank.
std::filesystem::path agreed_output_path(comm::Communicator& world, const std::optional<std::string>& given,
                                         const std::string& folder);

}  // namespace embscale::cli
