// PlanState (the search's incremental prediction) against PlanModel::evaluate (the whole plan
// evaluated from scratch), on random sequences of moves (fixed seeds): every tried move's step and
// fit, every made move's, and every whole table's best owner against trying each owner, over static
// and dynamic layers, a planned and a fixed layer, and memory limits that some plans miss.
#include "plan/plan_state.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "plan/plan_model.hpp"

namespace embscale::plan {
namespace {

// Eight Zipf tables in an "auto" layer (static, or dynamic), and a fixed distributed_slot layer
// of two more; `memory_per_rank` 0: the host's default, and then every scheme, else every scheme
// but data_parallel (whose replicas would miss any limit that table_wise's largest table meets).
config::Config config_of(bool dynamic, std::int64_t memory_per_rank, int ranks_per_node) {
  const std::string storage =
      dynamic
          ? R"(, "storage": {"type": "dynamic", "max_capacity": 1048576, "init_capacity": 1024, "bucket_capacity": 128})"
          : "";
  const std::string planner =
      memory_per_rank > 0 ? R"("memory_per_rank": )" + std::to_string(memory_per_rank) +
                                R"(, "schemes": ["table_wise", "table_row_wise", "row_wise", "distributed_slot"])"
                          : std::string();
  const std::string text = R"({
    "schema_version": 1,
    "solver": {"batchsize": 4096, "max_iter": 10, "seed": 7},
    "optimizer": {"type": "Adam", "adam_hparam": {"learning_rate": 0.001}},
    "planner": {)" + planner +
                           R"(},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic",
       "slot_size_array": [400000, 200000, 5000, 5000, 2000, 2000, 1000, 1000, 30000, 7000],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": [4, 2, 1, 1, 2, 2, 8, 8, 3, 1]},
       "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
       "sparse": [{"top": "data1", "slot_num": 10}]},
      {"name": "emb1", "type": "ShardedEmbedding", "sharding": "auto", "bottom": "data1", "top": "emb1",
       "slots": [0, 1, 2, 3, 4, 5, 6, 7], "ranks_per_node": )" +
                           std::to_string(ranks_per_node) + R"(,
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 32,
                                   "combiner": "sum"})" +
                           storage + R"(},
      {"name": "emb2", "type": "DistributedSlotSparseEmbeddingHash", "bottom": "data1", "top": "emb2",
       "slots": [8, 9],
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 16,
                                   "combiner": "mean"}}
    ]})";
  return config::parse_config_text(text, "plan_state_test");
}

// Every table's first candidate (a fixed layer: its scheme), owner 0; `planned` its indices.
std::vector<Choice> first_choices(const PlanModel& model, std::vector<std::size_t>& planned) {
  std::vector<Choice> choices;
  for (std::size_t c = 0; c < model.contexts().size(); ++c) {
    const auto& context = model.contexts()[c];
    for (std::size_t p = 0; p < context.layer->slots.size(); ++p) {
      if (context.planned) planned.push_back(choices.size());
      choices.push_back({c, p, context.layer->slots[p], context.planned ? context.candidates.front() : context.fixed,
                         context.fixed_owner.empty() ? 0 : context.fixed_owner[p]});
    }
  }
  return choices;
}

void expect_same(PlanModel& model, const std::vector<Choice>& choices, double seconds, bool fits,
                 const std::string& where) {
  const Evaluation full = model.evaluate(choices, false);
  EXPECT_NEAR(seconds, full.seconds, 1e-9 * full.seconds) << where;
  EXPECT_EQ(fits, full.fits) << where << ": " << full.shortfall;
}

void check_random_moves(bool dynamic, std::int64_t memory_per_rank, int ranks, std::uint64_t seed) {
  // Nodes of 4 ranks where they split the ranks (table_row_wise's tables placed on 4 nodes of 16
  // ranks), else of one.
  const int ranks_per_node = ranks % 4 == 0 ? 4 : 1;
  const config::Config config = config_of(dynamic, memory_per_rank, ranks_per_node);
  PlanModel model(config, ranks);
  std::vector<std::size_t> planned;
  PlanState state(model, first_choices(model, planned));
  const std::string setting = std::string(dynamic ? "dynamic" : "static") + ", limit " +
                              std::to_string(memory_per_rank) + ", " + std::to_string(ranks) + " ranks";
  expect_same(model, state.choices(), state.seconds(), state.fits(), setting + ", the start");
  std::mt19937_64 random(seed);
  int fitting = 0, missing = 0;
  for (int move = 0; move < 60; ++move) {
    const std::size_t i = planned[random() % planned.size()];
    const auto& candidates = model.contexts()[state.choices()[i].context].candidates;
    Choice to = state.choices()[i];
    to.scheme = candidates[random() % candidates.size()];
    const int unit = placed_unit(model.contexts()[to.context], *to.scheme);
    to.owner = unit > 0 ? static_cast<int>(random() % static_cast<std::uint64_t>(ranks / unit)) : 0;
    const std::string where = setting + ", move " + std::to_string(move);
    // Tried: the plan with the move, evaluated whole.
    const auto outcome = state.try_move(i, to);
    auto moved = state.choices();
    moved[i] = to;
    expect_same(model, moved, outcome.seconds, outcome.fits, where + " (tried)");
    (outcome.fits ? fitting : missing) += 1;
    // The best owner of a placed table (a whole table's rank, table_row_wise's node): no owner
    // does better, and it fits when any owner does.
    for (const char* name : {"table_wise", "table_row_wise"}) {
      const SchemeModel& scheme = *planned_scheme(name);
      const int owners = ranks / placed_unit(model.contexts()[to.context], scheme);
      const int owner = state.best_owner(i, scheme);
      Choice placed = state.choices()[i];
      placed.scheme = &scheme;
      double best_fitting = std::numeric_limits<double>::infinity(), best_any = best_fitting;
      for (int o = 0; o < owners; ++o) {
        placed.owner = o;
        auto trial = state.choices();
        trial[i] = placed;
        const auto full = model.evaluate(trial, false);
        best_any = std::min(best_any, full.seconds);
        if (full.fits) best_fitting = std::min(best_fitting, full.seconds);
      }
      placed.owner = owner;
      auto chosen = state.choices();
      chosen[i] = placed;
      const auto at_owner = model.evaluate(chosen, false);
      const double want = std::isfinite(best_fitting) ? best_fitting : best_any;
      EXPECT_NEAR(at_owner.seconds, want, 1e-9 * want) << where << ": " << name << "'s best owner " << owner;
      EXPECT_EQ(at_owner.fits, std::isfinite(best_fitting)) << where << ": " << name << "'s best owner " << owner;
    }
    // Made.
    state.move(i, to);
    expect_same(model, state.choices(), state.seconds(), state.fits(), where + " (made)");
  }
  if (memory_per_rank > 0) {
    EXPECT_GT(fitting, 0) << setting << ": the limit must let some plans fit";
    EXPECT_GT(missing, 0) << setting << ": and refuse some";
  }
}

TEST(PlanState, RandomMovesPredictWhatTheWholePlanEvaluates) {
  for (const int ranks : {1, 2, 5, 16})
    for (const bool dynamic : {false, true}) check_random_moves(dynamic, 0, ranks, 20261128 + ranks);
}

// A limit some placements meet and others miss: the fit is tracked exactly too.
TEST(PlanState, FitsUnderATightLimitAsTheWholePlanDoes) {
  check_random_moves(false, 100000000, 4, 11);
  check_random_moves(true, 30000000, 4, 12);
}

}  // namespace
}  // namespace embscale::plan
