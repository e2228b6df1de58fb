// PlanState: the prediction of one plan (a Choice per table) kept up to date as its tables move,
// so that the search prices a move in O(P) instead of re-evaluating the whole plan (PlanModel::
// evaluate: O(T x P) per call, which made the search O(T^2 x P^2)).
//
// What it keeps: per (layer context, scheme) group, every rank's time (the tables' rank_seconds
// summed: rank_seconds is linear in the work, so a table's share is its own work's seconds) and
// the group's slowest rank; per layer context, every rank's static bytes, stored rows and dynamic
// keys (the KV table's bytes follow from the keys); per rank, its memory over all layers. A
// placed table (a whole table, Ownership::kOneRank, or a table on one node, kNodeRowBlocks) puts
// its own time on each rank of its owner (a rank, a node) and one other time on every other rank,
// so the best owner of a table is found in O(P) too (best_owner), not by P evaluations.
//
// Its figures are PlanModel::evaluate's, summed in another order (equal to rounding:
// tests/plan/plan_state_test.cpp); the plan's reported prediction is evaluate's.
#pragma once

#include <cstdint>
#include <map>
#include <tuple>
#include <utility>
#include <vector>

#include "plan/plan_model.hpp"

namespace embscale::plan {

class PlanState {
 public:
  // `model` outlives the state.
  PlanState(PlanModel& model, std::vector<Choice> choices);

  const std::vector<Choice>& choices() const noexcept { return choices_; }
  double seconds() const noexcept { return seconds_; }
  bool fits() const noexcept;

  struct Outcome {
    double seconds = 0.0;
    bool fits = false;
  };
  // The plan's step and fit if table `i` took `to` (same context and slot), without moving it.
  Outcome try_move(std::size_t i, const Choice& to);
  void move(std::size_t i, const Choice& to);
  // For table `i` under `model` (a placed table: a whole table's rank, or kNodeRowBlocks's node):
  // the owner that gives the lowest step among those where the plan fits (ties: the lowest), else
  // the lowest step of all.
  int best_owner(std::size_t i, const SchemeModel& model);

 private:
  // A table's share of a plan under one scheme. A placed table (unit > 0 ranks per owner: 1 for
  // a whole table, a node's for kNodeRowBlocks) as if on owner 0: [the owner's unit ranks, any
  // other rank]; the others' one per rank.
  struct Share {
    int unit = 0;
    std::vector<double> seconds;  // the table's work's rank_seconds
    std::vector<double> bytes;    // static rows' bytes
    std::vector<double> rows;     // static rows (the vocabulary check)
    std::vector<double> keys;     // a dynamic layer's keys over the run
    double at(const std::vector<double>& v, int rank, int owner) const noexcept {
      if (unit == 0) return v[static_cast<std::size_t>(rank)];
      return rank / unit == owner ? v[static_cast<std::size_t>(rank % unit)] : v[static_cast<std::size_t>(unit)];
    }
  };
  struct Group {
    std::vector<double> seconds;  // per rank
    double slowest = 0.0;
    int tables = 0;
    int collectives = 0;
  };
  struct ContextMemory {
    std::vector<double> bytes, rows, keys;  // per rank: static bytes, static rows, dynamic keys
    std::vector<double> total;              // per rank: bytes plus the KV table's
    int tables = 0;                         // modelled tables (a KV table is charged when > 0)
    int over_vocabulary = 0;                // ranks above max_vocabulary_size_per_gpu
  };

  // A context's static bytes, rows and dynamic keys on `rank`, `leaving` (owned by `owner`) taken out.
  struct Held {
    double bytes, rows, keys;
  };
  static Held held_without(const ContextMemory& cm, int rank, const Share* leaving, int owner);
  const Share& share(const Choice& choice);
  Group& group(const Choice& choice);
  // A context's bytes on a rank: its static bytes, and a dynamic layer's KV table for `keys`.
  double context_total(std::size_t context, double bytes, double keys, int tables) const;
  bool over_vocabulary(std::size_t context, double rows) const;
  double group_step(const Group& g) const;
  // Adds (sign +1) or removes (-1) `choice`'s share.
  void apply(const Choice& choice, double sign);

  PlanModel& model_;
  int ranks_;
  std::vector<Choice> choices_;
  std::map<std::tuple<std::size_t, std::int32_t, const SchemeModel*>, Share> shares_;
  std::map<std::pair<std::size_t, const SchemeModel*>, Group> groups_;
  std::vector<ContextMemory> contexts_;
  std::vector<double> memory_;  // per rank, all layers
  double seconds_ = 0.0;
  int over_vocabulary_ = 0;  // over all contexts
};

}  // namespace embscale::plan
