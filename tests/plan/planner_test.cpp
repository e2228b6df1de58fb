#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "plan/capacity_search.hpp"
#include "plan/plan_report.hpp"
#include "run/training_run.hpp"

namespace embscale::plan {
namespace {

// Two Zipf tables and six small ones, one "auto" layer; `extra` goes into the planner section.
config::Config config_with(const std::string& sharding, const std::string& planner, double alpha = 1.2,
                           const std::string& mapping = "identity") {
  const std::string text = R"({
    "schema_version": 1,
    "solver": {"batchsize": 4096, "max_iter": 10, "seed": 7},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "planner": {)" + planner +
                           R"(},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic",
       "slot_size_array": [400000, 200000, 5000, 5000, 2000, 2000, 1000, 1000],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": )" +
                           std::to_string(alpha) + R"(, "key_mapping": ")" + mapping +
                           R"(", "nnz_per_slot": [4, 2, 1, 1, 2, 2, 8, 8]},
       "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
       "sparse": [{"top": "data1", "slot_num": 8}]},
      {"name": "emb1", "type": "ShardedEmbedding", "sharding": ")" +
                           sharding + R"(", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 32, "combiner": "sum"}}
    ]})";
  return config::parse_config_text(text, "planner_test");
}

TEST(Planner, PlannedConfigRunsTheChosenSchemes) {
  for (const int ranks : {1, 2, 4}) {
    auto c = config_with("auto", "");
    const auto plan = plan_sharding(c, ranks);
    const auto planned = planned_config(c, plan);
    EXPECT_NO_THROW(run::check_config_for_ranks(planned, ranks));
    ASSERT_EQ(planned.embeddings.size(), plan.layers.size());
    std::vector<std::int32_t> slots;
    for (std::size_t i = 0; i < plan.layers.size(); ++i) {
      const auto& layer = planned.embeddings[i];
      EXPECT_EQ(layer.name, plan.layers[i].name);
      EXPECT_EQ(layer.sharding, plan.layers[i].scheme);
      EXPECT_EQ(layer.slots, plan.layers[i].slots);
      EXPECT_EQ(std::vector<std::int32_t>(layer.table_ranks), plan.layers[i].table_ranks);
      slots.insert(slots.end(), layer.slots.begin(), layer.slots.end());
    }
    std::sort(slots.begin(), slots.end());
    EXPECT_EQ(slots, (std::vector<std::int32_t>{0, 1, 2, 3, 4, 5, 6, 7})) << "every table planned once";
  }
}

// The plan is never predicted slower than any one scheme for every table: the planner starts
// from each of them.
TEST(Planner, NeverPredictedSlowerThanAnyFixedScheme) {
  for (const int ranks : {2, 4}) {
    const auto plan = plan_sharding(config_with("auto", ""), ranks);
    for (const char* scheme : {"table_wise", "row_wise", "distributed_slot", "column_wise", "data_parallel"}) {
      const auto single = plan_sharding(config_with("auto", std::string(R"("schemes": [")") + scheme + "\"]"), ranks);
      EXPECT_LE(plan.step_seconds, single.step_seconds * (1 + 1e-9)) << scheme << " on " << ranks << " ranks";
    }
  }
}

// A Zipf head on the lowest ids: the skew-aware planner sees row_wise's contiguous blocks put it
// on rank 0 and prefers key % ranks; the skew-blind one (TorchRec's model) sees two equal halves.
TEST(Planner, SkewAwareSeesTheRowWiseHeadSkewBlindDoesNot) {
  const std::string choices = R"("schemes": ["row_wise", "distributed_slot"])";
  const auto aware = plan_sharding(config_with("auto", choices), 2);
  const auto blind = plan_sharding(config_with("auto_skew_blind", choices), 2);
  EXPECT_EQ(aware.policy, "skew_aware");
  EXPECT_EQ(blind.policy, "skew_blind");
  for (const auto& layer : aware.layers) {
    EXPECT_EQ(layer.scheme, "distributed_slot");
  }
  const auto row_wise = plan_sharding(config_with("auto", R"("schemes": ["row_wise"])"), 2);
  const auto& loads = row_wise.layers.front().loads;
  EXPECT_GT(loads[0].pairs, 2 * loads[1].pairs);
  const auto blind_row_wise = plan_sharding(config_with("auto_skew_blind", R"("schemes": ["row_wise"])"), 2);
  const auto& even = blind_row_wise.layers.front().loads;
  EXPECT_NEAR(even[0].pairs, even[1].pairs, 0.01 * even[0].pairs);
}

// The lookups predicted are the rows an owner reads: distinct keys when training (de-duplicated),
// every pair in evaluation on static fp32 rows (PooledExchange reads them in place, per pair).
TEST(Planner, EvaluationOnStaticRowsPredictsARowReadPerPair) {
  for (const std::string scheme : {"row_wise", "distributed_slot", "table_wise"}) {
    SCOPED_TRACE(scheme);
    const std::string choices = R"("schemes": [")" + scheme + R"("])";
    auto training = config_with("auto", choices);
    auto evaluation = config_with("auto", choices);
    evaluation.embeddings[0].storage.table.training = false;
    const auto trained = plan_sharding(training, 2).layers.front().loads;
    const auto evaluated = plan_sharding(evaluation, 2).layers.front().loads;
    for (std::size_t r = 0; r < trained.size(); ++r) {
      EXPECT_NEAR(evaluated[r].pairs, trained[r].pairs, 1e-9 * (1 + trained[r].pairs)) << "rank " << r;
      EXPECT_EQ(evaluated[r].distinct, evaluated[r].pairs) << "rank " << r;
      if (trained[r].pairs > 0) {
        EXPECT_LT(trained[r].distinct, trained[r].pairs) << "rank " << r;  // Zipf repeats keys
      }
    }
  }
}

TEST(Planner, RespectsTheMemoryLimit) {
  // Room for every table split over the ranks, not for a whole 400k-row table on one rank nor a
  // replica: 400000 x 32 x 4 bytes = 51.2 MB.
  const auto c = config_with("auto", R"("memory_per_rank": 40000000)");
  for (const int ranks : {2, 4}) {
    const auto plan = plan_sharding(c, ranks);
    EXPECT_LE(fullest_rank_bytes(plan), 40e6) << ranks << " ranks";
    for (const auto& layer : plan.layers) {
      if (std::find(layer.slots.begin(), layer.slots.end(), 0) == layer.slots.end()) continue;
      EXPECT_NE(layer.scheme, "table_wise");
      EXPECT_NE(layer.scheme, "data_parallel");
    }
  }
}

TEST(Planner, RefusesNamingTheTableAndTheShortfall) {
  const auto c = config_with("auto", R"("memory_per_rank": 1000000)");
  try {
    (void)plan_sharding(c, 2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("no sharding plan fits 2 ranks"), std::string::npos) << message;
    EXPECT_NE(message.find("more than"), std::string::npos) << message;
    EXPECT_NE(message.find("slot 0 (400000 rows"), std::string::npos) << message;
  }
}

TEST(Planner, RefusesUnknownSchemeNames) {
  try {
    (void)plan_sharding(config_with("auto", R"("schemes": ["row_wise", "all2all_dense"])"), 2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("planner.schemes[1]"), std::string::npos) << e.what();
  }
}

TEST(Planner, LoadsTableHasARowPerLayerAndRank) {
  const auto plan = plan_sharding(config_with("auto", ""), 4);
  const auto table = plan_loads_table(plan);
  EXPECT_EQ(table.rows(), plan.layers.size() * 4);
  const auto json = plan_json(plan);
  EXPECT_EQ(json["layers"].size(), plan.layers.size());
  EXPECT_EQ(json["config"]["layers"].size(), plan.layers.size() + 1);  // + the Data layer
}

}  // namespace
}  // namespace embscale::plan
