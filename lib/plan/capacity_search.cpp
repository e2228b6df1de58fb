#include "plan/capacity_search.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <sstream>

#include "core/error.hpp"
#include "plan/hardware_costs.hpp"

namespace embscale::plan {
namespace {

std::string milliseconds(double seconds) {
  std::ostringstream out;
  out.precision(4);
  out << seconds * 1e3 << " ms";
  return out.str();
}

}  // namespace

double fullest_rank_bytes(const ShardingPlan& plan) {
  double worst = 0.0;
  for (int r = 0; r < plan.ranks; ++r) {
    double sum = 0.0;
    for (const auto& layer : plan.layers) sum += layer.memory_bytes[static_cast<std::size_t>(r)];
    worst = std::max(worst, sum);
  }
  return worst;
}

CapacityAnswer plan_capacity(const config::Config& given,
                             const std::function<void(const CapacityCandidate&)>& progress) {
  const auto hardware = plan_hardware(given);
  const std::int64_t budget = given.planner && given.planner->memory_per_rank > 0 ? given.planner->memory_per_rank
                              : hardware                                          ? hardware->device_memory_bytes
                                                                                  : 0;
  if (budget == 0)
    throw InputError(
        "planner.memory_per_rank: capacity planning (plan without --ranks) needs the memory one rank (device) "
        "holds, in bytes (or --memory-per-rank, or a planner.hardware description); the default, this host's "
        "memory over the ranks, changes with the count it is asked to find");
  const auto& settings = *given.planner;
  CapacityAnswer answer;
  if (hardware) answer.devices_per_node = hardware->devices_per_node;
  answer.memory_per_rank =
      static_cast<std::int64_t>(std::floor(static_cast<double>(budget) * (1.0 - settings.memory_headroom)));
  std::map<int, ShardingPlan> kept_plans;
  // Plans `ranks` and judges it against the targets.
  const auto try_ranks = [&](int ranks) {
    CapacityCandidate candidate;
    candidate.ranks = ranks;
    config::Config config = given;
    config.planner->memory_per_rank = answer.memory_per_rank;
    try {
      config::resolve_batch_for_ranks(config, ranks);
      ShardingPlan plan = plan_sharding(config, ranks);
      candidate.step_seconds = plan.step_seconds;
      candidate.memory_bytes = fullest_rank_bytes(plan);
      if (settings.target_step_seconds && plan.step_seconds > *settings.target_step_seconds) {
        candidate.reason = "predicted step " + milliseconds(plan.step_seconds) +
                           " above planner.target_step_seconds (" + milliseconds(*settings.target_step_seconds) + ")";
      } else {
        candidate.kept = true;
        kept_plans.emplace(ranks, std::move(plan));
      }
    } catch (const InputError& e) {
      candidate.reason = e.what();  // no plan fits, or the layer cannot run on this count
    }
    answer.candidates.push_back(candidate);
    if (progress) progress(candidate);
    return candidate.kept;
  };
  // Doubling, then a bisection between the last count rejected and the first kept.
  const int most = static_cast<int>(settings.max_ranks);
  int rejected = 0, kept = 0;
  for (int ranks = 1;; ranks = ranks > most / 2 ? most : ranks * 2) {
    if (try_ranks(ranks)) {
      kept = ranks;
      break;
    }
    rejected = ranks;
    if (ranks == most) break;
  }
  if (kept == 0) {
    std::string tried;
    for (const auto& c : answer.candidates) tried += "\n  " + std::to_string(c.ranks) + " ranks: " + c.reason;
    throw InputError(
        "planner: no rank count up to planner.max_ranks (" + std::to_string(most) +
        ") meets the targets (planner.memory_per_rank less memory_headroom: " + std::to_string(answer.memory_per_rank) +
        " bytes per rank" +
        (settings.target_step_seconds ? ", planner.target_step_seconds: " + milliseconds(*settings.target_step_seconds)
                                      : std::string()) +
        "); the counts tried:" + tried);
  }
  while (kept - rejected > 1) {
    const int middle = rejected + (kept - rejected) / 2;
    (try_ranks(middle) ? kept : rejected) = middle;
  }
  answer.ranks = kept;
  answer.plan = std::move(kept_plans.at(kept));
  return answer;
}

}  // namespace embscale::plan
