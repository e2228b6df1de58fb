#include "plan/simulation.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <string>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "plan/hardware_test_support.hpp"
#include "plan/planner.hpp"
#include "workloads/batch_source_factory.hpp"

namespace embscale::plan {
namespace {

constexpr std::int64_t kSizes[] = {30000, 2000, 700};

// Three Zipf tables, one layer of `layer` (its type and scheme fields), `iterations` steps.
config::Config config_with(const std::string& layer, int iterations = 3, const std::string& dedup = "true") {
  const std::string text = R"({
    "schema_version": 1,
    "solver": {"batchsize": 1001, "max_iter": )" +
                           std::to_string(iterations) +
                           R"(, "warmup_iter": 2, "seed": 19},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [30000, 2000, 700],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": [5, 2, 3]},
       "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
       "sparse": [{"top": "data1", "slot_num": 3}]},
      {"name": "emb1", )" + layer +
                           R"(, "bottom": "data1", "top": "emb1", "deduplicate": )" + dedup + R"(,
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 40000, "embedding_vec_size": 8, "combiner": "sum"}}
    ]})";
  return config::parse_config_text(text, "simulation_test");
}

std::string sharded(const std::string& scheme) {
  return R"("type": "ShardedEmbedding", "sharding": ")" + scheme + R"(")";
}

// The oracle: a plain model of what each scheme's ranks count, written from the schemes'
// descriptions (std::set per owner, no KeyRouter, no OwnerRule), on the same batches.
struct Oracle {
  std::map<std::string, std::vector<std::int64_t>> counters;  // [iteration * ranks + rank]

  Oracle(const config::Config& config, const std::string& scheme, int ranks, bool dedup = true) {
    auto source = workloads::make_batch_source(config);
    for (std::int64_t w = 1; w <= config.solver.warmup_iter; ++w) (void)source->next_batch(-w, 0, 1);
    const std::vector<int> table_rank = {2 % ranks, 0, 1 % ranks};  // table_ranks of the config
    const auto offset = [](int slot) { return std::accumulate(kSizes, kSizes + slot, std::int64_t{0}); };
    const std::int64_t hot_rows[] = {100, 10, 5};  // hot_replicated: the config's
    for (std::int64_t it = 0; it < config.solver.max_iter; ++it) {
      const Batch batch = source->next_batch(it, 0, 1);
      const auto n = static_cast<std::size_t>(ranks);
      std::vector<std::int64_t> keys(n), sent(n), received(n), lookups(n), unique(n), exch_sent(n), exch_recv(n);
      std::vector<std::int64_t> hot_keys(n), hot_lookups(n);
      std::vector<std::set<Key>> owner_keys(n);
      std::vector<std::set<std::pair<int, Key>>> owner_requests(n);  // all2all_dense: (requester, key)
      for (int r = 0; r < ranks; ++r) {
        const auto share = sample_share_of(config.solver.batchsize, r, ranks);
        std::set<Key> mine, mine_hot;
        std::int64_t mine_keys = 0;
        for (std::int64_t s = share.first; s < share.first + share.count; ++s)
          for (int slot = 0; slot < 3; ++slot)
            for (const Key key : batch.bag(s * 3 + slot)) {
              ++keys[static_cast<std::size_t>(r)];
              ++mine_keys;
              mine.insert(key);
              if (scheme == "hot_replicated" && key - offset(slot) < hot_rows[slot]) {  // from its own replica
                ++hot_keys[static_cast<std::size_t>(r)];
                mine_hot.insert(key);
                continue;
              }
              int owner = 0;
              if (scheme == "row_wise")
                owner = static_cast<int>((key - offset(slot)) / ((kSizes[slot] + ranks - 1) / ranks));
              else if (scheme == "distributed_slot" || scheme == "all2all_dense" || scheme == "hot_replicated")
                owner = static_cast<int>(key % ranks);
              else if (scheme == "table_wise") owner = table_rank[static_cast<std::size_t>(slot)];
              else if (scheme == "localized_slot") owner = slot % ranks;  // HugeCTR: slot i on GPU i % P
              else if (scheme == "data_parallel") owner = r;
              if (scheme == "column_wise") {
                sent[static_cast<std::size_t>(r)] += ranks;
                for (int d = 0; d < ranks; ++d) {
                  ++received[static_cast<std::size_t>(d)];
                  owner_keys[static_cast<std::size_t>(d)].insert(key);
                }
                continue;
              }
              if (scheme == "all2all_dense") {
                owner_requests[static_cast<std::size_t>(owner)].insert({r, key});
                if (!dedup && owner != r) {
                  exch_sent[static_cast<std::size_t>(r)] += 8;
                  exch_recv[static_cast<std::size_t>(owner)] += 8;
                }
              } else if (scheme != "data_parallel") {
                ++sent[static_cast<std::size_t>(r)];
                ++received[static_cast<std::size_t>(owner)];
                if (owner != r) {
                  exch_sent[static_cast<std::size_t>(r)] += 16;
                  exch_recv[static_cast<std::size_t>(owner)] += 16;
                }
              }
              owner_keys[static_cast<std::size_t>(owner)].insert(key);
            }
        unique[static_cast<std::size_t>(r)] = dedup ? static_cast<std::int64_t>(mine.size()) : mine_keys;
        hot_lookups[static_cast<std::size_t>(r)] = static_cast<std::int64_t>(mine_hot.size());
        if (scheme == "column_wise") {
          for (int d = 0; d < ranks; ++d)
            if (d != r) {
              exch_sent[static_cast<std::size_t>(r)] += 16 * mine_keys;
              exch_recv[static_cast<std::size_t>(d)] += 16 * mine_keys;
            }
        }
      }
      if (scheme == "all2all_dense" && dedup)
        for (int d = 0; d < ranks; ++d)
          for (const auto& [r, key] : owner_requests[static_cast<std::size_t>(d)])
            if (r != d) {
              exch_sent[static_cast<std::size_t>(r)] += 8;
              exch_recv[static_cast<std::size_t>(d)] += 8;
            }
      for (int r = 0; r < ranks; ++r) {
        const auto i = static_cast<std::size_t>(r);
        lookups[i] = static_cast<std::int64_t>(owner_keys[i].size()) + hot_lookups[i];
        if (ranks > 1 && scheme != "data_parallel") {  // the alltoall of counts
          exch_sent[i] += 8 * (ranks - 1);
          exch_recv[i] += 8 * (ranks - 1);
        }
      }
      const auto put = [&](const std::string& name, const std::vector<std::int64_t>& v) {
        counters[name].insert(counters[name].end(), v.begin(), v.end());
      };
      put("keys", keys);
      put("lookups", lookups);
      if (scheme == "all2all_dense" || scheme == "data_parallel") put("unique_keys", unique);
      else {
        put("pairs_sent", sent);
        put("pairs_received", received);
      }
      if (scheme == "hot_replicated") {
        put("hot_keys", hot_keys);
        put("hot_lookups", hot_lookups);
      }
      if (scheme != "data_parallel") {
        put("exchange_keys.bytes_sent", exch_sent);
        put("exchange_keys.bytes_recv", exch_recv);
      }
    }
  }
};

TEST(Simulation, CountsWhatAPlainModelOfEachSchemeCounts) {
  // Training on the static table: the owners de-duplicate (lookups are distinct keys).
  for (const std::string scheme : {"row_wise", "distributed_slot", "table_wise", "localized_slot", "column_wise",
                                   "data_parallel", "all2all_dense", "hot_replicated"}) {
    const std::string layer = scheme == "all2all_dense"    ? R"("type": "All2AllDenseEmbedding")"
                              : scheme == "localized_slot" ? R"("type": "LocalizedSlotSparseEmbeddingHash")"
                              : scheme == "table_wise"     ? sharded(scheme) + R"(, "table_ranks": [2, 0, 1])"
                              : scheme == "hot_replicated" ? sharded(scheme) + R"(, "hot_rows": [100, 10, 5])"
                                                           : sharded(scheme);
    for (const int ranks : {1, 3, 8}) {
      if (scheme == "table_wise" && ranks < 3) continue;  // its table_ranks need 3 ranks
      SCOPED_TRACE(scheme + " on " + std::to_string(ranks) + " ranks");
      const auto config = config_with(layer);
      const Simulation sim = simulate(config, {.ranks = ranks});
      const Oracle oracle(config, scheme, ranks);
      for (const auto& [name, values] : oracle.counters) {
        ASSERT_TRUE(sim.counters.count(name)) << name;
        EXPECT_EQ(sim.counters.at(name), values) << name;
      }
      EXPECT_EQ(sim.step_time.size(), 3U);
      for (const double t : sim.step_time) EXPECT_GT(t, 0.0);
    }
  }
}

TEST(Simulation, All2AllWithoutDeduplicationSendsEveryOccurrence) {
  const auto config = config_with(R"("type": "All2AllDenseEmbedding")", 2, "false");
  const Simulation sim = simulate(config, {.ranks = 4});
  const Oracle oracle(config, "all2all_dense", 4, false);
  EXPECT_EQ(sim.counters.at("exchange_keys.bytes_sent"), oracle.counters.at("exchange_keys.bytes_sent"));
  EXPECT_EQ(sim.counters.at("unique_keys"), oracle.counters.at("unique_keys"));
  EXPECT_EQ(sim.counters.at("lookups"), oracle.counters.at("lookups"));
}

TEST(Simulation, PhasesOfEveryRankAddUpToTheStep) {
  const Simulation sim = simulate(config_with(sharded("row_wise")), {.ranks = 5});
  ASSERT_EQ(sim.phase_names, (std::vector<std::string>{"compute", "communication"}));
  for (std::int64_t it = 0; it < sim.iterations; ++it)
    for (int r = 0; r < sim.ranks; ++r) {
      const auto k = static_cast<std::size_t>(it * sim.ranks + r);
      EXPECT_NEAR(sim.timings.at("compute")[k] + sim.timings.at("communication")[k],
                  sim.step_time[static_cast<std::size_t>(it)], 1e-12);
      EXPECT_GE(sim.timings.at("communication")[k], 0.0);
    }
}

// Link classes, against closed forms: row_wise's reduce-scatter and all-gather move every bag's
// pooled vector (8 floats per slot) to its requester, both ways. On the wire a rank sends every
// other rank's share forward and its own share to every other rank backward; the Communicator
// (bytes_sent) counts a reduce-scatter's whole buffer.
TEST(Simulation, SplitsEveryByteIntoItsLink) {
  const auto config = config_with(sharded("row_wise"), 2);
  const Simulation one_node = simulate(config, {.ranks = 8});
  const Simulation per_rank = simulate(config, {.ranks = 8, .ranks_per_node = 1});
  const Simulation two_nodes = simulate(config, {.ranks = 8, .ranks_per_node = 4});
  EXPECT_EQ(one_node.ranks_per_node, 8);
  for (std::size_t k = 0; k < 16; ++k) {
    const auto wire = one_node.counters.at("bytes_sent_intra_node")[k];
    EXPECT_EQ(one_node.counters.at("bytes_sent_inter_node")[k], 0);
    EXPECT_EQ(per_rank.counters.at("bytes_sent_intra_node")[k], 0);
    EXPECT_EQ(per_rank.counters.at("bytes_sent_inter_node")[k], wire);
    const auto intra = two_nodes.counters.at("bytes_sent_intra_node")[k];
    const auto inter = two_nodes.counters.at("bytes_sent_inter_node")[k];
    EXPECT_GT(intra, 0);
    EXPECT_GT(inter, 0);
    EXPECT_NEAR(static_cast<double>(intra + inter), static_cast<double>(wire), 2.0);
    const int rank = static_cast<int>(k % 8);
    const auto mine = static_cast<double>(sample_share_of(1001, rank, 8).count);
    const double bag_bytes = 3 * 8 * 4.0;
    const auto keys = static_cast<double>(one_node.counters.at("exchange_keys.bytes_sent")[k]);
    EXPECT_NEAR(static_cast<double>(wire) - keys, (1001.0 - mine) * bag_bytes + 7.0 * mine * bag_bytes, 1.0);
    EXPECT_NEAR(static_cast<double>(one_node.counters.at("bytes_sent")[k]) - keys,
                1001.0 * bag_bytes + 7.0 * mine * bag_bytes, 1.0);
  }
}

// The analytic load model (table_load.hpp, what `plan` predicts) against the counts at 64 ranks:
// the per-rank distinct keys and pairs of row_wise's Zipf head, and the imbalance.
TEST(Simulation, AgreesWithThePlannersLoadsAtScale) {
  auto config = config_with(R"("type": "ShardedEmbedding", "sharding": "auto")", 40);
  config.planner.emplace().schemes = {"row_wise"};
  const int ranks = 64;
  config::resolve_batch_for_ranks(config, ranks);
  auto planned = config;
  const auto plan = plan_for_run(planned, ranks);
  ASSERT_TRUE(plan.has_value());
  const Simulation sim = simulate(planned, {.ranks = ranks});
  ASSERT_EQ(plan->layers.size(), 1U);
  const auto& predicted = plan->layers[0].loads;
  std::vector<double> lookups(ranks, 0.0), pairs(ranks, 0.0);
  for (std::size_t k = 0; k < sim.counters.at("lookups").size(); ++k) {
    lookups[k % ranks] += static_cast<double>(sim.counters.at("lookups")[k]) / 40.0;
    pairs[k % ranks] += static_cast<double>(sim.counters.at("pairs_received")[k]) / 40.0;
  }
  double predicted_max = 0, counted_max = 0, predicted_sum = 0, counted_sum = 0;
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    if (predicted[i].distinct > 50) {
      EXPECT_NEAR(lookups[i], predicted[i].distinct, 0.05 * predicted[i].distinct) << r;
    }
    if (predicted[i].pairs > 50) {
      EXPECT_NEAR(pairs[i], predicted[i].pairs, 0.05 * predicted[i].pairs) << r;
    }
    predicted_max = std::max(predicted_max, predicted[i].distinct);
    counted_max = std::max(counted_max, lookups[i]);
    predicted_sum += predicted[i].distinct;
    counted_sum += lookups[i];
  }
  EXPECT_NEAR(counted_max / (counted_sum / ranks), predicted_max / (predicted_sum / ranks),
              0.02 * predicted_max / (predicted_sum / ranks));
}

// hot_replicated planned at 64 ranks: the hot rows the planner chose, its per-rank loads (the cold
// keys each owner gets, the hot ones each rank reads from its replica) and the traffic the hot
// rows take out of the exchange, against the counts of a simulation of its plan.
TEST(Simulation, AgreesWithThePlannersHotReplicaLoadsAtScale) {
  auto config = config_with(R"("type": "ShardedEmbedding", "sharding": "auto")", 40);
  config.planner.emplace().schemes = {"hot_replicated"};
  const int ranks = 64;
  config::resolve_batch_for_ranks(config, ranks);
  auto planned = config;
  const auto plan = plan_for_run(planned, ranks);
  ASSERT_TRUE(plan.has_value());
  ASSERT_EQ(plan->layers.size(), 1U);
  const auto& layer = plan->layers[0];
  ASSERT_EQ(layer.hot_rows.size(), 3U);
  EXPECT_GT(layer.hot_rows[0], 0) << "the Zipf head of the largest table is worth replicating";
  EXPECT_EQ(planned.embeddings[0].hot_rows, layer.hot_rows) << "the plan's config carries its hot rows";
  const Simulation sim = simulate(planned, {.ranks = ranks});
  const auto& predicted = layer.loads;
  std::vector<double> pairs(ranks, 0.0), hot_keys(ranks, 0.0), lookups(ranks, 0.0);
  for (std::size_t k = 0; k < sim.counters.at("lookups").size(); ++k) {
    pairs[k % ranks] += static_cast<double>(sim.counters.at("pairs_received")[k]) / 40.0;
    hot_keys[k % ranks] += static_cast<double>(sim.counters.at("hot_keys")[k]) / 40.0;
    lookups[k % ranks] += static_cast<double>(sim.counters.at("lookups")[k]) / 40.0;
  }
  for (int r = 0; r < ranks; ++r) {
    const auto i = static_cast<std::size_t>(r);
    EXPECT_NEAR(pairs[i], predicted[i].pairs, 0.05 * predicted[i].pairs + 2.0) << r;
    EXPECT_NEAR(hot_keys[i], predicted[i].replica_pairs, 0.05 * predicted[i].replica_pairs + 2.0) << r;
    EXPECT_NEAR(lookups[i], predicted[i].lookups(), 0.05 * predicted[i].lookups() + 2.0) << r;
  }
  // Against distributed_slot on the same batches: the hot keys no longer travel.
  auto plain = planned;
  plain.embeddings[0].sharding = "distributed_slot";
  plain.embeddings[0].hot_rows.clear();
  const Simulation distributed = simulate(plain, {.ranks = ranks});
  const auto total = [](const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), 0.0); };
  EXPECT_NEAR(total(sim.counters.at("pairs_sent")) + total(sim.counters.at("hot_keys")),
              total(distributed.counters.at("pairs_sent")), 0.5);
  EXPECT_LT(total(sim.counters.at("exchange_keys.bytes_sent")),
            0.8 * total(distributed.counters.at("exchange_keys.bytes_sent")));
}

// The planner's model of table_row_wise (scheme_cost.cpp, kNodeRowBlocks) against the counts: on
// 16 ranks in nodes of 4, the bytes inside and across nodes over all ranks, and the predicted step
// (both models cost a byte on its own link), within 5 %.
TEST(Simulation, ThePlannersTableRowWiseAgreesWithTheCountedLinks) {
  auto config = config_with(R"("type": "ShardedEmbedding", "sharding": "table_row_wise", "ranks_per_node": 4)", 20);
  // Nodes of 4 devices, a link inside a node 8 times as fast as across.
  const testing::HardwareFile file("nodes_of_4", testing::two_links(5e10, 4));
  config.planner.emplace().hardware = file.path();
  const int ranks = 16;
  const auto plan = plan_sharding(config, ranks);
  ASSERT_EQ(plan.layers.size(), 1U);
  const auto& layer = plan.layers[0];
  ASSERT_EQ(layer.scheme, "table_row_wise");
  double intra = 0.0, inter = 0.0;
  for (const auto& w : layer.work) {
    intra += w.intra_node_bytes;
    inter += w.inter_node_bytes;
  }
  const Simulation sim = simulate(config, {.ranks = ranks});
  ASSERT_EQ(sim.ranks_per_node, 4);
  const auto per_step = [&](const std::string& name) {  // sent, over all ranks; sent + received is twice that
    const auto& v = sim.counters.at(name);
    return 2.0 * std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(sim.iterations);
  };
  EXPECT_NEAR(intra, per_step("bytes_sent_intra_node"), 0.05 * intra);
  EXPECT_NEAR(inter, per_step("bytes_sent_inter_node"), 0.05 * inter);
  std::vector<double> steps(sim.step_time.begin(), sim.step_time.end());
  std::sort(steps.begin(), steps.end());
  EXPECT_NEAR(plan.step_seconds, steps[steps.size() / 2], 0.05 * plan.step_seconds);
}

TEST(Simulation, RefusesWhatItCannotCount) {
  // table_row_wise's nodes must split the ranks.
  const auto nodes = config_with(R"("type": "ShardedEmbedding", "sharding": "table_row_wise", "ranks_per_node": 3)");
  try {
    (void)simulate(nodes, {.ranks = 4});
    FAIL() << "4 ranks were split into nodes of 3";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[emb1].ranks_per_node"), std::string::npos) << e.what();
  }
  EXPECT_NO_THROW((void)simulate(nodes, {.ranks = 6}));
  // Without ranks_per_node a node is the host's ranks: on fewer ranks than a node holds, all of them.
  const auto host = config_with(R"("type": "ShardedEmbedding", "sharding": "table_row_wise")");
  EXPECT_NO_THROW((void)simulate(host, {.ranks = 4, .ranks_per_node = 8}));
  // Data without key spaces (a Norm trace without slot_size_array): said, not a crash.
  auto norm = config_with(sharded("distributed_slot"));
  norm.data.slot_size_array.clear();
  try {
    (void)simulate(norm, {.ranks = 2});
    FAIL() << "data without slot_size_array was simulated";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[data].slot_size_array"), std::string::npos) << e.what();
  }
  EXPECT_THROW((void)simulate(config_with(sharded("row_wise")), {.ranks = 0}), InputError);
  EXPECT_THROW((void)simulate(config_with(sharded("row_wise")), {.ranks = 2, .ranks_per_node = -1}), InputError);
}

// table_row_wise's bytes by link: with the simulation's nodes those of the layer, its node-level
// reduce-scatter and all-gather stay inside a node and only its alltoallv crosses.
TEST(Simulation, KeepsTableRowWisesReductionInsideItsNodes) {
  const auto config = config_with(R"("type": "ShardedEmbedding", "sharding": "table_row_wise", "ranks_per_node": 4)");
  const Simulation sim = simulate(config, {.ranks = 8});
  EXPECT_EQ(sim.ranks_per_node, 4);
  const Simulation flat = simulate(config, {.ranks = 8, .ranks_per_node = 8});
  double intra = 0, inter = 0;
  for (std::size_t k = 0; k < sim.counters.at("bytes_sent").size(); ++k) {
    intra += static_cast<double>(sim.counters.at("bytes_sent_intra_node")[k]);
    inter += static_cast<double>(sim.counters.at("bytes_sent_inter_node")[k]);
    EXPECT_EQ(flat.counters.at("bytes_sent_inter_node")[k], 0);
    EXPECT_EQ(sim.counters.at("bytes_sent")[k], flat.counters.at("bytes_sent")[k]);  // the same calls
  }
  EXPECT_GT(inter, 0.0);
  EXPECT_GT(intra, inter) << "the reduction inside a node moves every bag of the node's tables";
}

}  // namespace
}  // namespace embscale::plan
