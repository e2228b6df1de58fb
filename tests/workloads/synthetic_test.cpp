#include "workloads/synthetic.hpp"

#include <gtest/gtest.h>

namespace embscale::workloads {
namespace {

config::DataLayer small_data(config::KeyDistribution distribution) {
  config::DataLayer d;
  d.name = "data";
  d.format = "Synthetic";
  d.slot_size_array = {50, 7, 1000};
  d.slot_num = 3;
  d.label_dim = 1;
  d.dense_dim = 2;
  d.sparse_top = "data1";
  d.synthetic.distribution = distribution;
  d.synthetic.zipf_alpha = 1.1;
  d.synthetic.nnz_per_slot = 3;
  return d;
}

TEST(SampleShare, CoversTheBatchContiguously) {
  for (int ranks : {1, 2, 3, 4, 7}) {
    std::int64_t next = 0;
    for (int r = 0; r < ranks; ++r) {
      const auto share = sample_share(10, r, ranks);
      EXPECT_EQ(share.first, next);
      next += share.count;
    }
    EXPECT_EQ(next, 10);
  }
}

TEST(SyntheticGenerator, RankSharesConcatenateToTheGlobalBatch) {
  for (auto dist : {config::KeyDistribution::kZipf, config::KeyDistribution::kUniform}) {
    const SyntheticGenerator gen(small_data(dist), 99, 10);
    const Batch whole = gen.generate(5, 0, 1);
    validate_batch(whole);
    std::vector<Key> joined;
    std::vector<float> labels, dense;
    for (int r = 0; r < 3; ++r) {
      const Batch part = gen.generate(5, r, 3);
      validate_batch(part);
      joined.insert(joined.end(), part.keys.begin(), part.keys.end());
      labels.insert(labels.end(), part.labels.begin(), part.labels.end());
      dense.insert(dense.end(), part.dense.begin(), part.dense.end());
    }
    EXPECT_EQ(joined, whole.keys);
    EXPECT_EQ(labels, whole.labels);
    EXPECT_EQ(dense, whole.dense);
  }
}

TEST(SyntheticGenerator, KeysStayInTheirSlotRangeAndIterationsDiffer) {
  const SyntheticGenerator gen(small_data(config::KeyDistribution::kZipf), 7, 64);
  const Batch a = gen.generate(0, 0, 1);
  const Batch b = gen.generate(1, 0, 1);
  EXPECT_NE(a.keys, b.keys);
  for (std::int64_t bag = 0; bag < a.num_bags(); ++bag) {
    const auto slot = static_cast<std::int32_t>(bag % a.num_slots);
    ASSERT_EQ(a.bag(bag).size(), 3u);
    for (const Key k : a.bag(bag)) {
      EXPECT_GE(k, gen.slot_offset(slot));
      EXPECT_LT(k, gen.slot_offset(slot + 1));
    }
  }
  EXPECT_EQ(gen.total_vocabulary(), 1057);
}

}  // namespace
}  // namespace embscale::workloads
