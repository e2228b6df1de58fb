// Whether a run's tables fit before any rank allocates them: each rank's host memory at start
// (embedding/memory_need.hpp: the engine's layers, and a parameter server's shards on its server
// ranks) against its share of what its node can give. An oversized table
// is refused with the estimate, the layer and fields that size it and the limit (InputError:
// exit 2), rather than ending in std::bad_alloc, or in the OOM killer once its zero-filled rows
// are touched on a shared node.
//
// `run` and each `sweep` point check inside comm::run_agreed after the plan, before the engine
// exists (every rank its own need against its own node's share: one verdict, printed once);
// `validate --ranks N [--ranks-per-node K]` checks rank by rank against this machine's memory.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "config/config.hpp"

namespace embscale::run {

// What this node can give a process now: /proc/meminfo's MemAvailable, lowered to what its memory
// cgroups leave (cgroup v2 memory.max - memory.current up the hierarchy; v1 limit_in_bytes -
// usage_in_bytes), such as a Slurm job's --mem.
struct NodeMemory {
  double available_bytes = 0.0;
  std::string source;  // where the figure comes from, for messages
};
NodeMemory node_available_memory();

struct MemoryShare {
  double bytes = 0.0;
  std::string source;
};
// One rank's share: `given_per_rank` (planner.memory_per_rank when the config sets it: the user's
// statement of what a rank may hold) when > 0, else the node's available memory over the ranks
// it runs.
MemoryShare memory_share(std::int64_t given_per_rank, const NodeMemory& node, int ranks_on_node);

// InputError naming the rank, its estimate, the layer that takes the most and the fields that size
// it, and the limit, when rank `only_rank` of `ranks` (nullopt: the fullest rank) needs more host
// memory at start than `share`.
void check_host_memory(const config::Config& config, int ranks, std::optional<int> only_rank, const MemoryShare& share);

// "1.5 GiB", "768 MiB", "12 KiB", "100 B": the largest unit the value reaches, 3 significant digits.
std::string format_bytes(double bytes);

}  // namespace embscale::run
