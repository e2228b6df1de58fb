#include "plan/planner.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "plan/hardware_costs.hpp"
#include "plan/plan_model.hpp"
#include "plan/plan_state.hpp"
#include "plan/planned_config.hpp"

namespace embscale::plan {
namespace {

// Measured on the development machine (lib/plan/README.md, "Calibration"): a fit of the phase
// times of every fixed scheme's run to the work this model predicts for it.
constexpr CostParameters kDefaultCost{2.55e-8, 2.45e-8, 4.38e-11, 2.43e-10, 0.0};

// TorchRec's HeuristicalStorageReservation keeps 15 % of a device's memory back.
constexpr double kMemoryReserve = 0.15;

// Moves of one table are tried this many rounds over all tables at most (each round that moves
// nothing ends the search first).
constexpr int kImprovementRounds = 20;
// A move must lower the predicted step time by more than this fraction to count (float noise).
constexpr double kImprovementTolerance = 1e-9;

// The search over the model's choices (planner.hpp: propose, improve, rate).
class Search {
 public:
  Search(const config::Config& config, int ranks, const PlanProgress& progress)
      : model_(config, ranks), progress_(progress) {}

  ShardingPlan plan() {
    std::vector<std::size_t> planned_tables;  // indices into choices of the planned tables
    std::vector<Choice> base;
    for (std::size_t c = 0; c < model_.contexts().size(); ++c) {
      const auto& context = model_.contexts()[c];
      const auto& slots = context.layer->slots;
      for (std::size_t p = 0; p < slots.size(); ++p) {
        Choice choice{c, p, slots[p], context.planned ? context.candidates.front() : context.fixed,
                      context.fixed_owner.empty() ? 0 : context.fixed_owner[p]};
        if (context.planned) planned_tables.push_back(base.size());
        base.push_back(choice);
      }
    }
    std::optional<std::vector<Choice>> best;
    double best_seconds = std::numeric_limits<double>::infinity();
    std::string shortfall;
    auto all_starts = starts(base, planned_tables);
    for (std::size_t s = 0; s < all_starts.size(); ++s) {
      start_ = "starting plan " + std::to_string(s + 1) + " of " + std::to_string(all_starts.size());
      say(start_);
      PlanState state(model_, std::move(all_starts[s]));
      if (!state.fits()) {
        // The last start holds least: its shortfall is the one to report.
        shortfall = model_.evaluate(state.choices(), false).shortfall;
        continue;
      }
      improve(state, planned_tables);
      if (state.seconds() < best_seconds * (1.0 - kImprovementTolerance)) {
        best_seconds = state.seconds();
        best = state.choices();
      }
    }
    if (!best)
      throw InputError("planner: no sharding plan fits " + std::to_string(model_.ranks()) + " ranks: " + shortfall);
    return finish(*best);
  }

 private:
  // The owner of a placed table (a whole table's rank, a table_row_wise table's node): the one
  // whose predicted time (over the tables placed so far) is least, among those with room for it
  // (PlanState::best_owner: O(P) per table).
  void place_whole_tables(std::vector<Choice>& choices, const std::vector<std::size_t>& planned) {
    std::vector<std::size_t> order;
    for (const auto i : planned)
      if (placed_unit(model_.contexts()[choices[i].context], *choices[i].scheme) > 0) order.push_back(i);
    const auto weight = [&](std::size_t i) {
      const auto& context = model_.contexts()[choices[i].context];
      std::vector<RankWork> work(static_cast<std::size_t>(model_.ranks()));
      model_.add_work(context, *choices[i].scheme, choices[i].slot, 0, work);
      return rank_seconds(work[0], model_.cost());
    };
    std::vector<double> weights(choices.size(), 0.0);
    for (const auto i : order) weights[i] = weight(i);
    std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return weights[a] > weights[b]; });
    // Tables of other schemes stay where they are; placed tables are placed one at a time.
    std::vector<const SchemeModel*> scheme_of(choices.size(), nullptr);
    for (const auto i : order) scheme_of[i] = std::exchange(choices[i].scheme, nullptr);
    PlanState state(model_, choices);
    for (const auto i : order) {
      Choice placed = state.choices()[i];
      placed.scheme = scheme_of[i];
      placed.owner = state.best_owner(i, *scheme_of[i]);
      state.move(i, placed);
    }
    choices = state.choices();
  }

  // The starting plans: each scheme for every table (where a layer may run it), and each table
  // on the scheme that holds least of it per rank.
  std::vector<std::vector<Choice>> starts(const std::vector<Choice>& base, const std::vector<std::size_t>& planned) {
    std::vector<std::vector<Choice>> result;
    for (const auto& model : planned_schemes()) {
      auto start = base;
      bool any = false;
      for (const auto i : planned) {
        const auto& candidates = model_.contexts()[start[i].context].candidates;
        if (std::find(candidates.begin(), candidates.end(), &model) == candidates.end()) continue;
        start[i].scheme = &model;
        any = true;
      }
      if (!any) continue;
      say("building starting plan " + std::to_string(result.size() + 1) + ": every table " + model.name);
      place_whole_tables(start, planned);
      result.push_back(std::move(start));
    }
    say("building starting plan " + std::to_string(result.size() + 1) + ": each table where it holds least");
    auto least = base;
    for (const auto i : planned) {
      const auto& context = model_.contexts()[least[i].context];
      double smallest = std::numeric_limits<double>::infinity();
      for (const auto* model : context.candidates) {
        if (model->ownership == Ownership::kOneRank && model_.ranks() > 1) continue;
        const auto rows = owned_rows(model_.table(context.skew_aware, least[i].slot), model->ownership, model_.ranks());
        const double width = model->ownership == Ownership::kEveryRank ? context.column_row_bytes : context.row_bytes;
        const double bytes = static_cast<double>(*std::max_element(rows.begin(), rows.end())) * width;
        if (bytes < smallest) {
          smallest = bytes;
          least[i].scheme = model;
        }
      }
    }
    place_whole_tables(least, planned);
    result.push_back(std::move(least));
    return result;
  }

  // Moves one table at a time to the scheme (a whole table: with its best owner) that lowers the
  // prediction most, until no move does (or kImprovementRounds rounds). Each try is O(P).
  void improve(PlanState& state, const std::vector<std::size_t>& planned) {
    for (int round = 0; round < kImprovementRounds; ++round) {
      bool moved = false;
      for (const auto i : planned) {
        const Choice current = state.choices()[i];
        const auto& context = model_.contexts()[current.context];
        Choice best = current;
        double seconds = state.seconds();
        for (const auto* model : context.candidates) {
          Choice candidate = current;
          candidate.scheme = model;
          candidate.owner = placed_unit(context, *model) > 0 ? state.best_owner(i, *model) : 0;
          if (candidate == current) continue;
          const auto outcome = state.try_move(i, candidate);
          if (outcome.fits && outcome.seconds < seconds * (1.0 - kImprovementTolerance)) {
            seconds = outcome.seconds;
            best = candidate;
          }
        }
        if (!(best == current)) {
          state.move(i, best);
          moved = true;
        }
      }
      if (progress_) {
        char predicted[64];
        std::snprintf(predicted, sizeof predicted, "predicted step %.4g ms", state.seconds() * 1e3);
        say(start_ + ", round " + std::to_string(round + 1) + " of moves: " + predicted +
            (moved ? "" : ", no move lowers it"));
      }
      if (!moved) return;
    }
  }

  void say(const std::string& doing) const {
    if (progress_) progress_(doing);
  }

  ShardingPlan finish(const std::vector<Choice>& choices) {
    auto evaluation = model_.evaluate(choices, true);
    // The search placed tables by memory and time; what depends on a rank's whole set of keys (a
    // two-tier layer's hit rate, its slow tiers' host memory) is checked on the plan it found.
    if (!evaluation.fits)
      throw InputError("planner: no sharding plan fits " + std::to_string(model_.ranks()) +
                       " ranks: " + evaluation.shortfall);
    ShardingPlan plan;
    plan.ranks = model_.ranks();
    plan.cost = model_.cost();
    plan.memory_per_rank = model_.memory_limit();
    if (const auto* hardware = model_.hardware()) {
      plan.hardware = hardware->name + " (" + hardware->origin + ")";
      const auto* settings = model_.config().planner ? &*model_.config().planner : nullptr;
      plan.default_compute_costs = !hardware->seconds_per_key && !(settings && settings->seconds_per_key);
    }
    plan.step_seconds = evaluation.seconds;
    plan.measured_slots = model_.measured_slots();
    plan.measured_reasons = model_.measured_reasons();
    plan.measured_batches = model_.measured_batches();
    bool aware = false, blind = false;
    for (const auto& context : model_.contexts()) {
      if (!context.planned) continue;
      (context.skew_aware ? aware : blind) = true;
    }
    plan.policy = aware && blind ? "skew_aware+skew_blind" : (blind ? "skew_blind" : "skew_aware");
    plan.layers = std::move(evaluation.layers);
    plan.config = planned_config_json(model_.config(), plan.layers);
    return plan;
  }

  PlanModel model_;
  const PlanProgress& progress_;
  std::string start_;  // which starting plan the search improves, for progress
};

}  // namespace

CostParameters cost_parameters(const config::PlannerSettings* settings, const config::HardwareDescription* hardware,
                               int ranks) {
  CostParameters cost = hardware ? hardware_costs(*hardware, ranks, kDefaultCost) : kDefaultCost;
  // Without a host link, the slow tier is this machine's memory (the CPU tables' mapped file).
  if (cost.seconds_per_slow_byte == 0.0) cost.seconds_per_slow_byte = cost.seconds_per_byte;
  if (settings) {
    cost.seconds_per_key = settings->seconds_per_key.value_or(cost.seconds_per_key);
    cost.seconds_per_row = settings->seconds_per_row.value_or(cost.seconds_per_row);
    cost.seconds_per_byte = settings->seconds_per_byte.value_or(cost.seconds_per_byte);
    cost.seconds_per_comm_byte = settings->seconds_per_comm_byte.value_or(cost.seconds_per_comm_byte);
    cost.seconds_per_collective = settings->seconds_per_collective.value_or(cost.seconds_per_collective);
    cost.seconds_per_slow_byte = settings->seconds_per_slow_byte.value_or(cost.seconds_per_slow_byte);
  }
  // Without a description of the links, a byte inside a node costs what any byte does.
  if (!hardware) cost.seconds_per_intra_node_byte = cost.seconds_per_inter_node_byte = cost.seconds_per_comm_byte;
  return cost;
}

std::int64_t default_memory_per_rank(int ranks) {
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  std::int64_t kib = 0;
  while (meminfo >> key) {
    if (key == "MemTotal:") {
      meminfo >> kib;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  if (kib <= 0) kib = std::int64_t{16} << 20;  // no /proc: assume 16 GiB
  return static_cast<std::int64_t>(static_cast<double>(kib) * 1024.0 * (1.0 - kMemoryReserve) / ranks);
}

ShardingPlan plan_sharding(const config::Config& config, int ranks, const PlanProgress& progress) {
  EMBSCALE_EXPECTS(ranks >= 1 && config.solver.batchsize >= 1, "a plan needs ranks >= 1 and a resolved batch");
  // Before any work: the loads of 10^6 ranks take minutes and gigabytes to compute.
  if (config.solver.batchsize < ranks)
    throw InputError("solver.batchsize: expected at least one sample per rank (>= " + std::to_string(ranks) +
                     "), got " + std::to_string(config.solver.batchsize));
  return Search(config, ranks, progress).plan();
}

}  // namespace embscale::plan
