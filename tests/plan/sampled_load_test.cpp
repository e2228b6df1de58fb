#include "plan/sampled_load.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.hpp"

namespace embscale::plan {
namespace {

// Two Zipf slots (identity and permuted keys), a batch of 512, every timed batch of the run.
config::Config zipf_config() {
  config::Config c;
  c.solver.seed = 5;
  c.solver.batchsize = 512;
  c.solver.warmup_iter = 2;
  auto& d = c.data;
  d.name = "data";
  d.format = config::DataFormat::kSynthetic;
  d.slot_size_array = {80'000, 3'000};
  d.slot_num = 2;
  d.sparse_top = "data1";
  config::SlotWorkload w;
  w.keys.zipf_alpha = 1.1;
  w.nnz = 5;
  d.synthetic = config::SyntheticSource::same_for_all(w, 2);
  d.synthetic.slots[1].mapping = config::KeyMapping::kPermutation;
  d.synthetic.slots[1].nnz = 2;
  return c;
}

// What the planner measures where it has no model equals what it predicts where it has one, up
// to 400 batches' sampling error (2 %), for every ownership.
TEST(LoadSample, MeasuredLoadsAgreeWithTheAnalyticOnes) {
  const auto c = zipf_config();
  for (const int ranks : {2, 4}) {
    const LoadSample sample(c, ranks, {0, 1}, true, 400);
    EXPECT_EQ(sample.batches(), 400);
    for (std::int32_t slot = 0; slot < 2; ++slot) {
      const auto table = table_model(c, slot, true);
      EXPECT_NEAR(sample.bag_size(slot), table.bag_size, 1e-12);
      for (const auto ownership : {Ownership::kOneRank, Ownership::kRowBlocks, Ownership::kKeyModulo,
                                   Ownership::kEveryRank, Ownership::kReplicas}) {
        const auto predicted = expected_loads(table, ownership, ranks, c.solver.batchsize);
        const auto measured = sample.loads(slot, ownership);
        for (int r = 0; r < ranks; ++r) {
          const auto ur = static_cast<std::size_t>(r);
          const std::string where = "slot " + std::to_string(slot) + ", ownership " + std::to_string(int(ownership)) +
                                    ", " + std::to_string(ranks) + " ranks, rank " + std::to_string(r);
          EXPECT_NEAR(measured[ur].pairs, predicted[ur].pairs, 0.02 * predicted[ur].pairs + 1.0) << where;
          EXPECT_NEAR(measured[ur].distinct, predicted[ur].distinct, 0.02 * predicted[ur].distinct + 1.0) << where;
        }
      }
    }
  }
}

// Over all its batches, a sample's distinct keys are those of 400 batches' draws.
TEST(LoadSample, DistinctKeysOverTheSampleAreThoseOfAllItsDraws) {
  const auto c = zipf_config();
  const LoadSample sample(c, 2, {0}, true, 400);
  const auto table = table_model(c, 0, true);
  const auto over_run = distinct_over_run(table, Ownership::kRowBlocks, 2, c.solver.batchsize, 400);
  const auto measured = sample.distinct_over_sample(0, Ownership::kRowBlocks);
  for (std::size_t r = 0; r < 2; ++r) EXPECT_NEAR(measured[r], over_run[r], 0.02 * over_run[r]) << "rank " << r;
}

TEST(LoadSample, RefusesASourceWithNoBatchAfterTheWarmup) {
  auto c = zipf_config();
  c.data.format = config::DataFormat::kEmbscale;
  c.data.source = "/nonexistent/trace.emb";
  EXPECT_THROW(LoadSample(c, 2, {0}, false), InputError);
}

}  // namespace
}  // namespace embscale::plan
