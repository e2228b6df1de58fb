// Every scheme of the registry against the single-process reference model (reference_model.hpp),
// on the 1, 2 and 4 ranks this binary is launched on: after N steps of the same global batches,
// the pooled outputs of the last step and every row this rank holds equal the reference's.
//
// Tolerance: engine_test_support.hpp.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "core/batch_source.hpp"
#include "embedding/engine.hpp"
#include "embedding/scheme_registry.hpp"
#include "embedding/engine_test_support.hpp"
#include "embedding/reference_model.hpp"
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
};

config::Config test_config(const Case& c, int ranks) {
  config::SlotWorkload slot;
  slot.keys.distribution = config::KeyDistribution::kZipf;
  slot.keys.zipf_alpha = 1.05;
  slot.nnz = 3;
  config::Config cfg = testing::synthetic_config({40, 9, 300}, slot, 24, kSteps, 1234);
  config::EmbeddingLayer e = testing::scheme_layer(c.scheme);
  e.combiner = c.combiner;
  e.optimizer = c.optimizer;
  if (c.scheme == "table_row_wise") e.ranks_per_node = ranks >= 4 ? 2 : 1;
  if (c.dynamic) {
    e.storage.dynamic = true;
    e.storage.table.max_capacity = 4096;  // far above the keys: nothing is evicted
    e.storage.table.bucket_capacity = 128;
  }
  cfg.embeddings.push_back(e);
  return cfg;
}

void check_against_reference(const Case& c) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const int ranks = world.size(), rank = world.rank();
  const config::Config cfg = test_config(c, ranks);
  const auto& layer = cfg.embeddings[0];
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  EmbeddingEngine engine(world, cfg, cfg.data.slot_size_array);
  const LayerSpec& spec = engine.spec(0);

  // Column-wise: rank r holds columns [first_r, first_r + count_r), the first dim % ranks ranks
  // one more; every other scheme holds whole rows.
  const bool column_wise = c.scheme == "column_wise";
  std::vector<std::int32_t> slices;
  std::int32_t my_first = 0;
  for (int r = 0, first = 0; r < (column_wise ? ranks : 1); ++r) {
    const int width = column_wise ? layer.embedding_vec_size / ranks + (r < layer.embedding_vec_size % ranks) : layer.embedding_vec_size;
    if (r == rank) my_first = first;
    slices.push_back(width);
    first += width;
  }
  if (!column_wise) my_first = 0;
  testing::ReferenceModel reference(layer, spec.table_seed, spec.slot_sizes, spec.slot_offsets, cfg.solver.batchsize, slices);

  StepRecorder recorder;
  std::vector<float> expected;
  for (std::int64_t it = 0; it < kSteps; ++it) {
    engine.step(gen.generate(it, rank, ranks), recorder);
    expected = reference.step(gen.generate_range(it, {0, cfg.solver.batchsize}));
  }

  const auto dim = static_cast<std::size_t>(layer.embedding_vec_size);
  const auto share = sample_share_of(cfg.solver.batchsize, rank, ranks);
  const auto got = engine.pooled(0);
  ASSERT_EQ(got.size(), static_cast<std::size_t>(share.count) * 3 * dim);
  const RelativeError pooled = testing::pooled_error(got, expected, share, 3 * dim);
  EXPECT_LT(pooled.relative(), kTolerance) << c.scheme << ": pooled outputs of the last step on rank " << rank;

  RelativeError rows;
  std::int64_t held = 0;
  const RowStore& store = engine.scheme(0).store();
  store.for_each_row([&](Key key, std::span<const float> values) {
    const auto want = reference.values(key, static_cast<std::size_t>(my_first), values.size());
    for (std::size_t d = 0; d < values.size(); ++d) rows.add(values[d], want[d]);
    ++held;
  });
  // A rank may own nothing (3 slots placed whole on 4 ranks), the ranks together never.
  EXPECT_GT(world.allreduce(held, comm::ReduceOp::kSum), 0) << c.scheme << ": no rank holds rows";
  EXPECT_LT(rows.relative(), kTolerance) << c.scheme << ": rows held by rank " << rank;
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
  for (const auto type : {OptimizerType::kSGD, OptimizerType::kMomentumSGD, OptimizerType::kNesterov, OptimizerType::kAdam,
                          OptimizerType::kAdaGrad, OptimizerType::kRowWiseAdaGrad})
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

TEST_P(EveryScheme, DynamicStorageWithoutEvictionMatchesTheReference) {
  if (GetParam() == "column_wise" || GetParam() == "data_parallel") GTEST_SKIP() << "static storage only (refused)";
  for (const auto& optimizer : every_optimizer()) {
    SCOPED_TRACE("optimizer " + config::to_string(optimizer.type) + ", update " + config::to_string(optimizer.update_type));
    check_against_reference(Case{GetParam(), config::Combiner::kMean, optimizer, true});
  }
}

std::string param_name(const ::testing::TestParamInfo<std::string>& param) { return param.param; }

INSTANTIATE_TEST_SUITE_P(Registry, EveryScheme, ::testing::ValuesIn(scheme_names()), param_name);

}  // namespace
}  // namespace embscale::embedding
