#include "plan/planner.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "core/error.hpp"
#include "plan/capacity_search.hpp"
#include "plan/hardware_test_support.hpp"
#include "plan/plan_report.hpp"
#include "plan/tier_model.hpp"
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

// The search says what it does, in order: each starting plan built, then each one improved round
// by round until no move lowers its prediction; a batch with fewer samples than ranks is refused
// before any of it.
TEST(Planner, SaysWhatItDoesAndRefusesRanksWithoutSamplesFirst) {
  auto c = config_with("auto", "");
  std::vector<std::string> said;
  const auto plan = plan_sharding(c, 4, [&](const std::string& doing) { said.push_back(doing); });
  ASSERT_FALSE(said.empty());
  EXPECT_EQ(said.front(), "building starting plan 1: every table table_wise");
  const auto at = [&](const std::string& text) {
    return std::find_if(said.begin(), said.end(), [&](const std::string& s) { return s.starts_with(text); });
  };
  EXPECT_NE(at("building starting plan 2:"), said.end());
  EXPECT_LT(at("building starting plan 2:"), at("starting plan 1 of "));
  EXPECT_LT(at("starting plan 1 of "), at("starting plan 2 of "));
  EXPECT_NE(std::find_if(said.begin(), said.end(),
                         [](const std::string& s) { return s.find(", no move lowers it") != std::string::npos; }),
            said.end());
  EXPECT_EQ(plan.ranks, 4);
  try {
    (void)plan_sharding(c, 8192, [&](const std::string& doing) { ADD_FAILURE() << "planned anyway: " << doing; });
    ADD_FAILURE() << "8192 ranks for a batch of 4096";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "solver.batchsize: expected at least one sample per rank (>= 8192), got 4096");
  }
}

// The plan is never predicted slower than any one scheme for every table: the planner starts
// from each of them.
TEST(Planner, NeverPredictedSlowerThanAnyFixedScheme) {
  for (const int ranks : {2, 4}) {
    const auto plan = plan_sharding(config_with("auto", ""), ranks);
    for (const char* scheme : {"table_wise", "table_row_wise", "row_wise", "distributed_slot", "hot_replicated",
                               "column_wise", "data_parallel"}) {
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

// Where a pair's trip costs more than a replicated row's allreduce, the planner replicates the
// Zipf head of the large tables (hot_replicated, with the hot rows it chose in the planned config)
// and predicts a faster step than distributed_slot alone; under a permuted key mapping the first
// rows are not the hot ones, and it replicates none.
TEST(Planner, ReplicatesHotRowsWhereTheirPairsCostMore) {
  const std::string rates = R"("seconds_per_comm_byte": 2e-9, "seconds_per_key": 2e-8)";
  const std::string both = R"("schemes": ["distributed_slot", "hot_replicated"], )" + rates;
  auto c = config_with("auto", both);
  const auto plan = plan_sharding(c, 8);
  const auto alone = plan_sharding(config_with("auto", R"("schemes": ["distributed_slot"], )" + rates), 8);
  EXPECT_LT(plan.step_seconds, alone.step_seconds);
  const auto hot = std::find_if(plan.layers.begin(), plan.layers.end(),
                                [](const PlannedLayer& l) { return l.scheme == "hot_replicated"; });
  ASSERT_NE(hot, plan.layers.end());
  ASSERT_EQ(hot->hot_rows.size(), hot->slots.size());
  ASSERT_EQ(hot->slots.front(), 0);
  EXPECT_GT(hot->hot_rows.front(), 0);
  const auto planned = planned_config(c, plan);
  EXPECT_NO_THROW(run::check_config_for_ranks(planned, 8));
  const auto layer = std::find_if(planned.embeddings.begin(), planned.embeddings.end(),
                                  [](const config::EmbeddingLayer& e) { return e.sharding == "hot_replicated"; });
  ASSERT_NE(layer, planned.embeddings.end());
  EXPECT_EQ(layer->hot_rows, hot->hot_rows);

  const auto permuted = plan_sharding(config_with("auto", both, 1.2, "permutation"), 8);
  for (const auto& l : permuted.layers) EXPECT_EQ(l.scheme, "distributed_slot");
}

// Across a slow link between nodes, table_row_wise (its reduction inside the node, only each
// rank's own bags across) beats row_wise (a reduce-scatter over every rank); the plan places its
// tables on nodes and writes them, with the node size it planned for, into a config that runs.
TEST(Planner, KeepsTheReductionInsideANodeWhereTheLinkAcrossIsSlow) {
  // Nodes of 4, a link across 400 times slower than inside.
  const testing::HardwareFile file("slow_across", testing::two_links(1e9, 4));
  auto c = config_with("auto", R"("schemes": ["row_wise", "table_row_wise"], "hardware": ")" + file.path() + "\"");
  const auto plan = plan_sharding(c, 8);
  ASSERT_EQ(plan.layers.size(), 1U);
  const auto& layer = plan.layers.front();
  EXPECT_EQ(layer.scheme, "table_row_wise");
  EXPECT_EQ(layer.ranks_per_node, 4);
  ASSERT_EQ(layer.table_nodes.size(), 8U);
  for (const auto node : layer.table_nodes) EXPECT_LT(node, 2);
  // The largest two tables on different nodes.
  EXPECT_NE(layer.table_nodes[0], layer.table_nodes[1]);
  double inter = 0.0, intra = 0.0;
  for (const auto& w : layer.work) {
    inter += w.inter_node_bytes;
    intra += w.intra_node_bytes;
  }
  EXPECT_GT(intra, inter);
  const auto planned = planned_config(c, plan);
  EXPECT_NO_THROW(run::check_config_for_ranks(planned, 8));
  ASSERT_EQ(planned.embeddings.size(), 1U);
  EXPECT_EQ(planned.embeddings[0].ranks_per_node, 4);
  EXPECT_EQ(planned.embeddings[0].table_nodes, layer.table_nodes);
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

// A dynamic two-tier layer (caching: a fast table of global_hbm_for_values bytes of rows in front
// of the slow tier), planned key-modulo: each rank's fast tier is tier_model's recency prediction
// over its 1/P share of every slot, the fast tier's table is the rank's memory and the rest of its
// keys the slow tier's, and each miss moves a row there and back.
config::Config tiered_config(const std::string& planner, std::int64_t fast_bytes) {
  const std::string text = R"({
    "schema_version": 1,
    "solver": {"batchsize": 4096, "max_iter": 1000, "seed": 7},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "planner": {"schemes": ["distributed_slot"])" +
                           planner + R"(},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [400000, 200000],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.05, "nnz_per_slot": [4, 2]},
       "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
       "sparse": [{"top": "data1", "slot_num": 2}]},
      {"name": "emb1", "type": "ShardedEmbedding", "sharding": "auto", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 32, "combiner": "sum"},
       "storage": {"type": "dynamic", "max_capacity": 1048576, "caching": true, "score_strategy": "STEP",
                   "global_hbm_for_values": )" +
                           std::to_string(fast_bytes) + R"(}}
    ]})";
  return config::parse_config_text(text, "planner_test");
}

TEST(Planner, ATwoTierLayersFastTierIsPredictedPerRank) {
  constexpr std::int64_t kFastBytes = 32768 * 128;  // 32768 rows of 32 floats: 256 buckets of 128
  for (const int ranks : {2, 4}) {
    const auto c = tiered_config("", kFastBytes);
    const auto plan = plan_sharding(c, ranks);
    ASSERT_EQ(plan.layers.size(), 1u);
    const auto& layer = plan.layers[0];
    ASSERT_EQ(layer.fast_tier.size(), static_cast<std::size_t>(ranks));
    // The reference: each slot's popularity, a 1/P share of it, the batch's draws of it.
    const auto zipf0 = KeyPopularity::zipf(400'000, 1.05), zipf1 = KeyPopularity::zipf(200'000, 1.05);
    const std::vector<TierSlot> slots = {{&zipf0, 1.0 / ranks, 4096.0 * 4}, {&zipf1, 1.0 / ranks, 4096.0 * 2}};
    const auto expected = recency_tier(slots, 32768.0);
    for (int r = 0; r < ranks; ++r) {
      const auto& p = layer.fast_tier[static_cast<std::size_t>(r)];
      EXPECT_EQ(p.retention, TierRetention::kRecency);
      EXPECT_DOUBLE_EQ(p.capacity, 32768.0);
      EXPECT_FALSE(p.below_one_step);
      EXPECT_NEAR(p.hit_rate, expected.hit_rate, 1e-12) << r;
      EXPECT_GT(p.hit_rate, 0.1);
      EXPECT_LT(p.hit_rate, 0.99);
      EXPECT_NEAR(layer.work[static_cast<std::size_t>(r)].slow_tier_bytes, p.misses * 128.0 * 2.0, 1e-6) << r;
      EXPECT_GT(layer.slow_memory_bytes[static_cast<std::size_t>(r)], 0.0);
    }
    // The fast tier alone is in the rank's memory: less than the one-tier table of every key.
    auto one_tier = tiered_config("", kFastBytes);
    one_tier.embeddings[0].storage.caching = false;
    one_tier.embeddings[0].storage.global_hbm_for_values = 0;
    const auto whole = plan_sharding(one_tier, ranks);
    EXPECT_TRUE(whole.layers[0].fast_tier.empty());
    EXPECT_LT(fullest_rank_bytes(plan), fullest_rank_bytes(whole) / 4) << ranks;
  }
  // More ranks, each with its fast tier, hold more of the hot keys: the hit rate rises.
  const auto two = plan_sharding(tiered_config("", kFastBytes), 2),
             eight = plan_sharding(tiered_config("", kFastBytes), 8);
  EXPECT_GT(eight.layers[0].fast_tier[0].hit_rate, two.layers[0].fast_tier[0].hit_rate + 0.05);
}

TEST(Planner, AHitRateTargetIsAShortfallNamingTheBudget) {
  const auto c = tiered_config(R"(, "target_hit_rate": 0.97)", 2048 * 128);
  try {
    (void)plan_sharding(c, 2);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("global_hbm_for_values"), std::string::npos) << message;
    EXPECT_NE(message.find("below planner.target_hit_rate 0.97"), std::string::npos) << message;
  }
  // Without --ranks, the capacity search finds the ranks whose fast tiers together reach it.
  const auto answer = plan_capacity(
      tiered_config(R"(, "target_hit_rate": 0.5, "max_ranks": 64, "memory_per_rank": 1000000000)", 2048 * 128));
  EXPECT_GE(answer.plan.layers[0].fast_tier[0].hit_rate, 0.5);
  EXPECT_GT(answer.ranks, 2);
  ASSERT_FALSE(answer.candidates.empty());
  EXPECT_NE(answer.candidates.front().reason.find("target_hit_rate"), std::string::npos)
      << answer.candidates.front().reason;
}

}  // namespace
}  // namespace embscale::plan
