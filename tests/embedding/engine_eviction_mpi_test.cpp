// Every scheme that runs on dynamic storage, with tables small enough to evict, against per-rank
// reference tables (eviction_reference.hpp) of the same capacity and rules, on the 1, 2 and 4
// ranks this binary is launched on. After N steps of the same global batches, on every rank:
//   - the keys its table holds are exactly the reference table's (eviction and refusal depend on
//     keys and scores only, so they must agree exactly),
//   - their rows, and the pooled outputs of the last step, agree up to float rounding,
//   - its table counters (hits, misses, inserts, evictions, refused), summed over the steps, are
//     the reference's,
// and some rank evicted. Scores are deterministic (STEP, LFU); optimizers SGD, Adam (Local and
// Global) and AdaGrad; combiners sum and mean; tables that start full-sized and tables that grow.
//
// Tolerance: engine_test_support.hpp (a row that lost or kept an update it should not have moves
// by lr * |g|, ~1e-2 of its size, far above it).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "embedding/engine.hpp"
#include "embedding/engine_test_support.hpp"
#include "embedding/eviction_reference.hpp"
#include "embedding/scheme_registry.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::embedding {
namespace {

using testing::kTolerance;
using testing::RelativeError;

constexpr std::int64_t kSteps = 8;
constexpr std::int64_t kBucketCapacity = 16;  // the least a table takes

// The keys of the steps.
enum class Workload {
  // Zipf(1.05) over slots of 40, 9 and 300 keys, 3 per bag: ~80 distinct keys a step, a churning
  // tail. Tables of 2 buckets (a growing one starts at 1) evict on every rank count.
  kZipfChurn,
  // Uniform over slots of 6 x ranks keys each, 8 per bag (192 draws a slot and step): nearly
  // every key every step, ~18 a rank, over tables of one bucket (16). Under LFU a bucket whose
  // residents are all read again reaches a state with no resident of score 1, then refuses every
  // newcomer (which reads zeros and gets no update); under STEP a newcomer always evicts.
  kStableOverflow,
};

struct Case {
  std::string scheme;  // a registry name
  kv::ScoreStrategy scores = kv::ScoreStrategy::kStep;
  config::OptimizerType optimizer = config::OptimizerType::kSGD;
  config::UpdateType update = config::UpdateType::kLocal;
  config::Combiner combiner = config::Combiner::kSum;
  std::int64_t init_capacity = 0;  // 0: the table starts at its max_capacity
  bool deduplicate = true;
  Workload workload = Workload::kZipfChurn;
};

std::string describe(const Case& c) {
  return c.scheme + ", scores " + kv::to_string(c.scores) + ", optimizer " + config::to_string(c.optimizer) + " " +
         config::to_string(c.update) + ", combiner " + config::to_string(c.combiner) + ", init_capacity " +
         std::to_string(c.init_capacity) + (c.deduplicate ? "" : ", no de-duplication") +
         (c.workload == Workload::kZipfChurn ? ", Zipf churn" : ", stable overflow");
}

// table_row_wise's nodes: 2 ranks each on 4 ranks, else 1 (other schemes refuse the field).
int ranks_per_node(const std::string& scheme, int ranks) {
  if (scheme != "table_row_wise") return 0;
  return ranks >= 4 ? 2 : 1;
}

config::Config test_config(const Case& c, int ranks) {
  const bool churn = c.workload == Workload::kZipfChurn;
  config::SlotWorkload slot;
  slot.keys.distribution = churn ? config::KeyDistribution::kZipf : config::KeyDistribution::kUniform;
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = churn ? 3 : 8;
  const auto sizes = churn ? std::vector<std::int64_t>{40, 9, 300} : std::vector<std::int64_t>(3, 6 * ranks);
  config::Config cfg = testing::synthetic_config(sizes, slot, 24, kSteps, 4321);
  config::EmbeddingLayer e = testing::scheme_layer(c.scheme);
  e.combiner = c.combiner;
  e.optimizer.type = c.optimizer;
  e.optimizer.update_type = c.update;
  e.optimizer.learning_rate = c.optimizer == config::OptimizerType::kAdam ? 0.01 : 0.3;
  e.optimizer.initial_accu_value = 0.1;
  e.optimizer.epsilon = 1e-6;
  e.deduplicate = c.deduplicate;
  e.ranks_per_node = ranks_per_node(c.scheme, ranks);
  e.storage.dynamic = true;
  e.storage.table.max_capacity = churn ? 2 * kBucketCapacity : kBucketCapacity;
  e.storage.table.init_capacity = c.init_capacity;
  e.storage.table.bucket_capacity = kBucketCapacity;
  e.storage.table.score_strategy = c.scores;
  cfg.embeddings.push_back(e);
  return cfg;
}

// Whole tables onto `bins`: largest first (ties: the lower slot) onto the least loaded bin (ties:
// the lower bin), loads counted in keys (TorchRec's greedy placement, as the README states it).
std::vector<int> greedy_tables(const std::vector<std::int64_t>& sizes, int bins) {
  std::vector<int> bin_of(sizes.size(), -1);
  std::vector<std::int64_t> load(static_cast<std::size_t>(bins), 0);
  for (std::size_t placed = 0; placed < sizes.size(); ++placed) {
    std::size_t largest = sizes.size();
    for (std::size_t s = 0; s < sizes.size(); ++s)
      if (bin_of[s] < 0 && (largest == sizes.size() || sizes[s] > sizes[largest])) largest = s;
    std::size_t lightest = 0;
    for (std::size_t b = 1; b < load.size(); ++b)
      if (load[b] < load[lightest]) lightest = b;
    bin_of[largest] = static_cast<int>(lightest);
    load[lightest] += sizes[largest];
  }
  return bin_of;
}

// The owner of a key under each scheme, from the scheme table of lib/embedding/README.md, written
// apart from the schemes' code. Keys are unified: slot s's keys are [offset_s, offset_s + size_s).
testing::EvictionReference::Owner owner_of(const std::string& scheme, int ranks,
                                           const std::vector<std::int64_t>& sizes) {
  std::vector<Key> offsets(sizes.size(), 0);
  for (std::size_t s = 1; s < sizes.size(); ++s) offsets[s] = offsets[s - 1] + sizes[s - 1];
  // Row block of a key when its slot is split into `parts` contiguous blocks of ceil(size / parts).
  const auto block = [sizes, offsets](Key key, std::int32_t slot, int parts) {
    const auto s = static_cast<std::size_t>(slot);
    return static_cast<int>((key - offsets[s]) / ((sizes[s] + parts - 1) / parts));
  };
  if (scheme == "all2all_dense" || scheme == "distributed_slot" || scheme == "distributed_sparse")
    return [ranks](Key key, std::int32_t) { return static_cast<int>(key % ranks); };
  if (scheme == "localized_slot") return [ranks](Key, std::int32_t slot) { return slot % ranks; };
  if (scheme == "table_wise") {
    const auto rank_of = greedy_tables(sizes, ranks);
    return [rank_of](Key, std::int32_t slot) { return rank_of[static_cast<std::size_t>(slot)]; };
  }
  if (scheme == "row_wise") return [block, ranks](Key key, std::int32_t slot) { return block(key, slot, ranks); };
  if (scheme == "table_row_wise") {
    const int rpn = ranks_per_node(scheme, ranks);
    const auto node_of = greedy_tables(sizes, ranks / rpn);
    return [block, node_of, rpn](Key key, std::int32_t slot) {
      return node_of[static_cast<std::size_t>(slot)] * rpn + block(key, slot, rpn);
    };
  }
  return nullptr;
}

void check_against_reference(const Case& c) {
  SCOPED_TRACE(describe(c));
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int ranks = world.size(), rank = world.rank();
  const config::Config cfg = test_config(c, ranks);
  const auto& layer = cfg.embeddings[0];
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  EmbeddingEngine engine(world, cfg, cfg.data.slot_size_array);
  auto owner = owner_of(c.scheme, ranks, cfg.data.slot_size_array);
  ASSERT_TRUE(owner) << c.scheme << " runs on dynamic storage: give it its owner function here";
  std::int64_t vocabulary = 0;
  for (const auto size : cfg.data.slot_size_array) vocabulary += size;
  const auto options = testing::reference_table_options(layer, engine.spec(0).table_seed, vocabulary);
  testing::EvictionReference reference(layer, options, ranks, std::move(owner), cfg.solver.batchsize);

  StepRecorder recorder;
  std::vector<float> expected;
  testing::ReferenceCounters got;  // this rank's table counters, summed over the steps
  for (std::int64_t it = 0; it < kSteps; ++it) {
    engine.step(gen.generate(it, rank, ranks), recorder);
    expected = reference.step(gen.generate_range(it, {0, cfg.solver.batchsize}));
    for (const auto& [name, value] : recorder.counters()) {
      if (name == "hits") got.hits += value;
      if (name == "misses") got.misses += value;
      if (name == "inserts") got.inserts += value;
      if (name == "evictions") got.evictions += value;
      if (name == "refused") got.refused += value;
    }
  }

  const testing::ReferenceCounters& want = reference.counters(rank);
  EXPECT_EQ(got.hits, want.hits) << "hits on rank " << rank;
  EXPECT_EQ(got.misses, want.misses) << "misses on rank " << rank;
  EXPECT_EQ(got.inserts, want.inserts) << "inserts on rank " << rank;
  EXPECT_EQ(got.evictions, want.evictions) << "evictions on rank " << rank;
  EXPECT_EQ(got.refused, want.refused) << "refused on rank " << rank;
  EXPECT_GT(world.allreduce(got.evictions, comm::ReduceOp::kSum), 0)
      << "no rank's table evicted: the case tests nothing";
  if (c.workload == Workload::kStableOverflow && c.scores == kv::ScoreStrategy::kLfu) {
    EXPECT_GT(world.allreduce(got.refused, comm::ReduceOp::kSum), 0) << "no rank's table refused a key";
  }

  const auto dim = static_cast<std::size_t>(layer.embedding_vec_size);
  const auto share = sample_share_of(cfg.solver.batchsize, rank, ranks);
  const auto out = engine.pooled(0);
  ASSERT_EQ(out.size(), static_cast<std::size_t>(share.count) * 3 * dim);
  const RelativeError pooled = testing::pooled_error(out, expected, share, 3 * dim);
  EXPECT_LT(pooled.relative(), kTolerance) << "pooled outputs of the last step on rank " << rank;

  const auto entries = reference.table(rank).entries();
  std::vector<Key> held, want_held;
  for (const auto& [key, entry] : entries) want_held.push_back(static_cast<Key>(key));
  RelativeError rows;
  engine.scheme(0).store().for_each_row([&](Key key, std::span<const float> values) {
    held.push_back(key);
    const auto it = entries.find(static_cast<std::uint64_t>(key));
    if (it == entries.end()) return;  // reported by the key comparison below
    for (std::size_t d = 0; d < values.size(); ++d) rows.add(values[d], it->second.row[d]);
  });
  std::sort(held.begin(), held.end());
  EXPECT_EQ(held, want_held) << "keys held by rank " << rank;
  EXPECT_LT(rows.relative(), kTolerance) << "rows held by rank " << rank;
}

// The registry's schemes that run on dynamic storage (column_wise, data_parallel and
// hot_replicated refuse it).
std::vector<std::string> dynamic_scheme_names() {
  std::vector<std::string> names;
  for (const auto& entry : schemes())
    if (!testing::static_only(entry.name)) names.emplace_back(entry.name);
  return names;
}

class EveryDynamicScheme : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryDynamicScheme, EvictingTablesMatchPerRankReferenceTables) {
  using config::Combiner;
  using config::OptimizerType;
  using config::UpdateType;
  using kv::ScoreStrategy;
  const std::string& s = GetParam();
  check_against_reference({s, ScoreStrategy::kStep, OptimizerType::kSGD, UpdateType::kLocal, Combiner::kSum});
  check_against_reference({s, ScoreStrategy::kLfu, OptimizerType::kAdam, UpdateType::kLocal, Combiner::kMean});
  // A growing table (1 bucket, then 2) and the sweep over untouched rows.
  check_against_reference({s, ScoreStrategy::kStep, OptimizerType::kAdam, UpdateType::kGlobal, Combiner::kMean, 16});
  check_against_reference({s, ScoreStrategy::kLfu, OptimizerType::kAdaGrad, UpdateType::kLocal, Combiner::kSum, 16});
  // Frozen LFU buckets refuse newcomers (zeros pooled, no update); STEP always evicts instead.
  check_against_reference({s, ScoreStrategy::kLfu, OptimizerType::kSGD, UpdateType::kLocal, Combiner::kMean, 0, true,
                           Workload::kStableOverflow});
  check_against_reference({s, ScoreStrategy::kStep, OptimizerType::kAdaGrad, UpdateType::kLocal, Combiner::kSum, 0,
                           true, Workload::kStableOverflow});
  if (s == "all2all_dense")  // the owner then receives every occurrence and de-duplicates them itself
    check_against_reference(
        {s, ScoreStrategy::kStep, OptimizerType::kSGD, UpdateType::kLocal, Combiner::kMean, 0, false});
}

std::string param_name(const ::testing::TestParamInfo<std::string>& param) { return param.param; }

INSTANTIATE_TEST_SUITE_P(Registry, EveryDynamicScheme, ::testing::ValuesIn(dynamic_scheme_names()), param_name);

}  // namespace
}  // namespace embscale::embedding
