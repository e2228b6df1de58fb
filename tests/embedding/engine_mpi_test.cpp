// Every scheme of the registry against the single-process reference model (reference_model.hpp),
// on the 1, 2 and 4 ranks this binary is launched on: after N steps of the same global batches,
// the pooled outputs of the last step and every row this rank holds equal the reference's.
//
// Tolerance: engine_test_support.hpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "embedding/engine.hpp"
#include "embedding/engine_test_support.hpp"
#include "embedding/reference_model.hpp"
#include "embedding/scheme_registry.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::embedding {
namespace {

using testing::kTolerance;
using testing::RelativeError;
constexpr std::int64_t kSteps = 5;

struct Case {
  std::string scheme;  // a registry name
  config::Combiner combiner = config::Combiner::kSum;
  config::Optimizer optimizer;
  bool dynamic = false;
  enum class Tiers { kNone, kCaching, kHybrid } tiers = Tiers::kNone;
};

config::EmbeddingLayer layer_for(const Case& c, int ranks) {
  config::EmbeddingLayer e = testing::scheme_layer(c.scheme);
  e.combiner = c.combiner;
  e.optimizer = c.optimizer;
  if (c.scheme == "table_row_wise") e.ranks_per_node = ranks >= 4 ? 2 : 1;
  if (c.dynamic) {
    e.storage.dynamic = true;
    e.storage.table.max_capacity = 4096;  // far above the keys: nothing is evicted
    e.storage.table.bucket_capacity = 128;
  }
  if (c.tiers != Case::Tiers::kNone) {
    // A fast tier of about 32 rows, far fewer than a rank touches: rows move between the tiers
    // (caching: demoted and promoted; hybrid: placed by hash) and must not change on the way.
    e.storage.table.bucket_capacity = 16;
    e.storage.caching = c.tiers == Case::Tiers::kCaching;
    e.storage.global_hbm_for_values = 32 * (6 + 16) * 4;
  }
  return e;
}

config::Config test_config(const Case& c, int ranks) {
  config::SlotWorkload slot;
  slot.keys.distribution = config::KeyDistribution::kZipf;
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = 3;
  config::Config cfg = testing::synthetic_config({40, 9, 300}, slot, 24, kSteps, 1234);
  cfg.embeddings.push_back(layer_for(c, ranks));
  return cfg;
}

// Runs `cfg` for kSteps steps on every rank of the world and checks each layer's pooled outputs of
// the last step and every row each rank holds against the layer's reference model.
void check_config_against_reference(const config::Config& cfg, const std::string& what, EngineOptions options = {}) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int ranks = world.size(), rank = world.rank();
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  EmbeddingEngine engine(world, cfg, cfg.data.slot_size_array, options);

  std::vector<testing::ReferenceModel> references;
  std::vector<std::int32_t> my_first;  // per layer: the first column this rank holds
  for (std::size_t i = 0; i < engine.layers(); ++i) {
    const auto& layer = cfg.embeddings[i];
    const LayerSpec& spec = engine.spec(i);
    // Column-wise: rank r holds columns [first_r, first_r + count_r), the first dim % ranks ranks
    // one more; every other scheme holds whole rows.
    const bool column_wise = layer.sharding == "column_wise";
    std::vector<std::int32_t> slices;
    my_first.push_back(0);
    for (int r = 0, first = 0; r < (column_wise ? ranks : 1); ++r) {
      const int width = column_wise ? layer.embedding_vec_size / ranks + (r < layer.embedding_vec_size % ranks)
                                    : layer.embedding_vec_size;
      if (column_wise && r == rank) my_first.back() = first;
      slices.push_back(width);
      first += width;
    }
    references.emplace_back(layer, spec.table_seed, spec.slot_sizes, spec.slot_offsets, cfg.solver.batchsize, slices);
  }

  StepRecorder recorder;
  std::vector<std::vector<float>> expected(engine.layers());
  for (std::int64_t it = 0; it < kSteps; ++it) {
    engine.step(gen.generate(it, rank, ranks), recorder);
    const Batch global = gen.generate_range(it, {0, cfg.solver.batchsize});
    for (std::size_t i = 0; i < engine.layers(); ++i)
      expected[i] = references[i].step(select_slots(global, cfg.embeddings[i].slots));
  }

  const auto share = sample_share_of(cfg.solver.batchsize, rank, ranks);
  for (std::size_t i = 0; i < engine.layers(); ++i) {
    const auto bag_values =
        cfg.embeddings[i].slots.size() * static_cast<std::size_t>(cfg.embeddings[i].embedding_vec_size);
    const auto got = engine.pooled(i);
    ASSERT_EQ(got.size(), static_cast<std::size_t>(share.count) * bag_values);
    const RelativeError pooled = testing::pooled_error(got, expected[i], share, bag_values);
    EXPECT_LT(pooled.relative(), kTolerance)
        << what << ", layer " << i << ": pooled outputs of the last step on rank " << rank;

    RelativeError rows;
    std::int64_t held = 0;
    engine.scheme(i).store().for_each_row([&](Key key, std::span<const float> values) {
      const auto want = references[i].values(key, static_cast<std::size_t>(my_first[i]), values.size());
      for (std::size_t d = 0; d < values.size(); ++d) rows.add(values[d], want[d]);
      ++held;
    });
    // A rank may own nothing (3 slots placed whole on 4 ranks), the ranks together never.
    EXPECT_GT(world.allreduce(held, comm::ReduceOp::kSum), 0) << what << ", layer " << i << ": no rank holds rows";
    EXPECT_LT(rows.relative(), kTolerance) << what << ", layer " << i << ": rows held by rank " << rank;
  }
}

void check_against_reference(const Case& c, EngineOptions options = {}) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  check_config_against_reference(test_config(c, world.size()), c.scheme, options);
}

std::vector<std::string> scheme_names() {
  std::vector<std::string> names;
  for (const auto& entry : schemes()) names.emplace_back(entry.name);
  return names;
}

// Every optimizer with every update type it accepts (LazyGlobal: Adam only), hyper-parameters
// large enough that momentum, bias correction and accumulators all move the rows visibly.
std::vector<config::Optimizer> every_optimizer() {
  using config::OptimizerType;
  using config::UpdateType;
  std::vector<config::Optimizer> out;
  for (const auto type : {OptimizerType::kSGD, OptimizerType::kMomentumSGD, OptimizerType::kNesterov,
                          OptimizerType::kAdam, OptimizerType::kAdaGrad, OptimizerType::kRowWiseAdaGrad})
    for (const auto update : {UpdateType::kLocal, UpdateType::kGlobal, UpdateType::kLazyGlobal}) {
      if (update == UpdateType::kLazyGlobal && type != OptimizerType::kAdam) continue;
      config::Optimizer o;
      o.type = type;
      o.update_type = update;
      o.learning_rate = type == OptimizerType::kAdam ? 0.01 : 0.3;
      o.momentum_factor = 0.9;
      o.initial_accu_value = 0.1;
      o.epsilon = 1e-6;
      out.push_back(o);
    }
  return out;
}

class EveryScheme : public ::testing::TestWithParam<std::string> {};

TEST_P(EveryScheme, EveryOptimizerAndCombinerMatchesTheReference) {
  for (const auto& optimizer : every_optimizer())
    for (const auto combiner : {config::Combiner::kSum, config::Combiner::kMean}) {
      SCOPED_TRACE("optimizer " + config::to_string(optimizer.type) + ", update " +
                   config::to_string(optimizer.update_type) + ", combiner " + config::to_string(combiner));
      check_against_reference(Case{GetParam(), combiner, optimizer, false});
    }
}

// Several threads per rank (EngineOptions::threads: the owners' pooling and the static table's
// update) give the reference's results too.
TEST_P(EveryScheme, SeveralThreadsPerRankMatchTheReference) {
  for (const auto& optimizer : every_optimizer())
    for (const bool dynamic : {false, true}) {
      if (dynamic && testing::static_only(GetParam())) continue;  // static only
      SCOPED_TRACE("optimizer " + config::to_string(optimizer.type) + ", update " +
                   config::to_string(optimizer.update_type) + (dynamic ? ", dynamic" : ", static"));
      check_against_reference(Case{GetParam(), config::Combiner::kSum, optimizer, dynamic},
                              EngineOptions{.threads = 2});
    }
}

TEST_P(EveryScheme, TieredStorageMatchesTheReference) {
  if (testing::static_only(GetParam())) GTEST_SKIP() << "static storage only (refused)";
  for (const auto tiers : {Case::Tiers::kCaching, Case::Tiers::kHybrid})
    for (const auto& optimizer : every_optimizer()) {
      if (optimizer.update_type == config::UpdateType::kGlobal) continue;  // refused on tiers
      SCOPED_TRACE("optimizer " + config::to_string(optimizer.type) + ", update " +
                   config::to_string(optimizer.update_type) +
                   (tiers == Case::Tiers::kCaching ? ", caching" : ", hybrid"));
      check_against_reference(Case{GetParam(), config::Combiner::kSum, optimizer, true, tiers});
    }
}

TEST_P(EveryScheme, DynamicStorageWithoutEvictionMatchesTheReference) {
  if (testing::static_only(GetParam())) GTEST_SKIP() << "static storage only (refused)";
  for (const auto& optimizer : every_optimizer()) {
    SCOPED_TRACE("optimizer " + config::to_string(optimizer.type) + ", update " +
                 config::to_string(optimizer.update_type));
    check_against_reference(Case{GetParam(), config::Combiner::kMean, optimizer, true});
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& param) { return param.param; }

// Two layers over slot subsets, each its own dim, scheme and optimizer; de-duplication off on one.
TEST(EngineLayers, SeveralLayersOverSlotSubsetsMatchTheirReferences) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  Case first{"row_wise", config::Combiner::kMean, {}, false};
  first.optimizer.type = config::OptimizerType::kAdam;
  first.optimizer.learning_rate = 0.01;
  config::Config cfg = test_config(first, world.size());
  cfg.embeddings[0].slots = {0, 2};
  Case second{"all2all_dense", config::Combiner::kSum, {}, false};
  second.optimizer.learning_rate = 0.5;
  config::EmbeddingLayer other = layer_for(second, world.size());
  other.name = "emb2";
  other.slots = {1};
  other.embedding_vec_size = 4;
  other.deduplicate = false;
  cfg.embeddings.push_back(other);
  check_config_against_reference(cfg, "two layers");
}

// Evaluation mode: forward only, the rows stay their initial values (static rows; a dynamic table
// inserts nothing in evaluation, so only its counters are checked). On static fp32 rows an owner
// that pools reads every pair's row in place (no de-duplication: its lookups are its pairs); on a
// dynamic table it de-duplicates first (lookups: distinct keys, no more than its pairs). The
// rows hot_replicated reads from its replica (hot_lookups) are the distinct hot keys, apart.
TEST_P(EveryScheme, EvaluationModeMatchesTheReferenceAndCountsItsRowReads) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  for (const bool dynamic : {false, true})
    for (const int threads : {1, 2}) {
      if (dynamic && testing::static_only(GetParam())) continue;  // static only
      SCOPED_TRACE(std::string(dynamic ? "dynamic" : "static") + ", threads " + std::to_string(threads));
      Case c{GetParam(), config::Combiner::kMean, {}, dynamic};
      c.optimizer.learning_rate = 0.5;
      config::Config cfg = test_config(c, world.size());
      cfg.embeddings[0].storage.table.training = false;
      if (!dynamic) check_config_against_reference(cfg, "evaluation", EngineOptions{.threads = threads});

      const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
      EmbeddingEngine engine(world, cfg, cfg.data.slot_size_array, EngineOptions{.threads = threads});
      StepRecorder recorder;
      engine.step(gen.generate(0, world.rank(), world.size()), recorder);
      std::int64_t lookups = -1, pairs = -1, replica_lookups = 0;
      for (const auto& [name, value] : recorder.counters()) {
        if (name.ends_with("hot_lookups")) replica_lookups = value;  // hot_replicated: read from its replica
        else if (name.ends_with("lookups")) lookups = value;
        if (name.ends_with("pairs_received")) pairs = value;
      }
      lookups -= replica_lookups;
      ASSERT_GE(lookups, 0) << "no lookups counter";
      if (pairs < 0) continue;  // not a scheme that pools on owners
      if (dynamic) {
        EXPECT_LE(lookups, pairs) << "rank " << world.rank();
      } else {
        EXPECT_EQ(lookups, pairs) << "rank " << world.rank();
      }
    }
}

// After training, a layer's store reads each row it holds as it shows it (RowStore::read against
// for_each_row), the keys in a shuffled order: hot_replicated's view over its two stores routes
// every key to the store that holds it.
TEST_P(EveryScheme, TheStoreReadsTheRowsItHolds) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  config::Optimizer sgd;
  sgd.learning_rate = 0.3;
  const config::Config cfg = test_config(Case{.scheme = GetParam(), .optimizer = sgd}, world.size());
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  EmbeddingEngine engine(world, cfg, cfg.data.slot_size_array);
  StepRecorder recorder;
  for (std::int64_t it = 0; it < 2; ++it) engine.step(gen.generate(it, world.rank(), world.size()), recorder);
  RowStore& store = engine.store(0);
  std::vector<Key> keys;
  std::vector<float> shown;
  const auto dim = static_cast<std::size_t>(store.dim());
  store.for_each_row([&](Key key, std::span<const float> values) {
    keys.push_back(key);
    shown.insert(shown.end(), values.begin(), values.end());
  });
  std::vector<std::size_t> order(keys.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937_64(5));
  std::vector<Key> asked;
  for (const auto i : order) asked.push_back(keys[i]);
  std::vector<float> read(keys.size() * dim);
  store.read(asked, read);
  for (std::size_t j = 0; j < order.size(); ++j)
    for (std::size_t d = 0; d < dim; ++d)
      ASSERT_EQ(read[j * dim + d], shown[order[j] * dim + d]) << "key " << asked[j] << " on rank " << world.rank();
}

// Static rows are checked against max_vocabulary_size_per_gpu before any rank allocates
// (check_layers_for_ranks, which `validate --ranks` runs too): the rows it reckons for the fullest
// rank must be what the scheme's stores hold once made. Random sizes of the layer's three slots
// (fixed seed), so that blocks, residues and table placements vary: at that capacity the run
// starts; one row less and it is refused with the number, before the engine is built and by the
// stores' own check.
TEST_P(EveryScheme, TheRowsCheckedBeforeARunAreWhatTheFullestRankHolds) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  std::mt19937_64 random(20261128);
  for (int trial = 0; trial < 4; ++trial) {
    config::Optimizer sgd;
    sgd.learning_rate = 0.1;
    const Case c{.scheme = GetParam(), .optimizer = sgd};
    config::Config cfg = test_config(c, world.size());
    for (auto& size : cfg.data.slot_size_array) size = 1 + static_cast<std::int64_t>(random() % 1000);
    if (c.scheme == "column_wise") cfg.embeddings[0].embedding_vec_size = 4;  // a column per rank
    cfg.embeddings[0].max_vocabulary_size_per_gpu = 1 << 20;                  // room for every row, to count them
    EmbeddingEngine engine(world, cfg, cfg.data.slot_size_array);
    const std::int64_t held = world.allreduce(engine.store(0).size(), comm::ReduceOp::kMax);
    cfg.embeddings[0].max_vocabulary_size_per_gpu = held;
    EXPECT_NO_THROW(check_layers_for_ranks(cfg, cfg.data.slot_size_array, world.size())) << c.scheme;
    cfg.embeddings[0].max_vocabulary_size_per_gpu = held - 1;
    const std::string expected = "max_vocabulary_size_per_gpu: expected at least " + std::to_string(held) + " ";
    try {
      check_layers_for_ranks(cfg, cfg.data.slot_size_array, world.size());
      ADD_FAILURE() << c.scheme << ": " << held - 1 << " rows per rank accepted, the fullest rank holds " << held;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
    EXPECT_THROW(EmbeddingEngine(world, cfg, cfg.data.slot_size_array), InputError) << c.scheme;
  }
}

INSTANTIATE_TEST_SUITE_P(Registry, EveryScheme, ::testing::ValuesIn(scheme_names()), param_name);

}  // namespace
}  // namespace embscale::embedding
