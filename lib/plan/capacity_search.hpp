// Capacity planning: the fewest ranks (devices) on which a config's plan meets its targets, for
// `embscale plan` without --ranks. Each candidate rank count is planned as `plan --ranks P` plans
// it (the batch resolved for P, plan_sharding), and kept if
//   * a plan fits planner.memory_per_rank (else the planner.hardware device's memory) less
//     planner.memory_headroom of it on every rank, and
//   * its predicted step is at most planner.target_step_seconds (when given).
// The counts tried: 1, 2, 4, ... up to planner.max_ranks, then a bisection between the last
// power of two rejected and the first kept. The bisection assumes that a count that meets the
// targets stays one with more ranks (a rank's memory only falls as ranks are added); where the
// predicted step is not monotone, it can only answer more ranks than the fewest, never a count
// that misses. Every candidate, kept or rejected with its reason, is in the answer.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/planner.hpp"

namespace embscale::plan {

struct CapacityCandidate {
  int ranks = 0;
  bool kept = false;
  double step_seconds = 0.0;  // predicted (0 when no plan fits)
  double memory_bytes = 0.0;  // the fullest rank's (0 when no plan fits)
  std::string reason;         // rejected: why
};

struct CapacityAnswer {
  std::int64_t memory_per_rank = 0;           // the budget each candidate planned under (headroom taken off)
  std::vector<CapacityCandidate> candidates;  // in the order tried
  int ranks = 0;                              // the fewest that meet the targets
  std::int64_t devices_per_node = 0;          // planner.hardware's (0: no description)
  ShardingPlan plan;                          // its plan
};

// The fewest ranks for `config` (its planner section set, with a budget that does not depend on
// the count: memory_per_rank > 0, or a planner.hardware description's device memory). `progress` hears of each candidate as it ends.
// InputError naming the field when a setting is missing, or when no count up to max_ranks meets
// the targets (the candidates and their reasons in the message).
CapacityAnswer plan_capacity(const config::Config& config,
                             const std::function<void(const CapacityCandidate&)>& progress = {});

// The fullest rank's bytes over a plan's layers.
double fullest_rank_bytes(const ShardingPlan& plan);

}  // namespace embscale::plan
