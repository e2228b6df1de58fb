#include "workloads/synthetic.hpp"

#include <gtest/gtest.h>

#include <set>

namespace embscale::workloads {
namespace {

config::DataLayer small_data(config::KeyDistribution distribution) {
  config::DataLayer d;
  d.name = "data";
  d.format = config::DataFormat::kSynthetic;
  d.slot_size_array = {50, 7, 1000};
  d.slot_num = 3;
  d.label_dim = 1;
  d.dense_dim = 2;
  d.sparse_top = "data1";
  config::SlotWorkload slot;
  slot.keys.distribution = distribution;
  slot.keys.zipf_alpha = 1.1;
  slot.nnz = 3;
  d.synthetic = config::SyntheticSource::same_for_all(slot, d.slot_num);
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

// Every feature at once, with bags of varying size: mixtures, drift, growth, multi-hot, repeats
// removed or redrawn, uniform and DLRM bag sizes, permuted keys, per slot.
config::DataLayer rich_data() {
  config::DataLayer d;
  d.name = "data";
  d.format = config::DataFormat::kSynthetic;
  d.slot_size_array = {500, 64, 100000, 30};
  d.slot_num = 4;
  d.label_dim = 2;
  d.dense_dim = 3;
  d.sparse_top = "data1";
  std::vector<config::SlotWorkload> slots(4);
  slots[0].keys.distribution = config::KeyDistribution::kMixture;
  config::KeySpec uniform;
  uniform.distribution = config::KeyDistribution::kUniform;
  slots[0].keys.mixture = {{0.7, config::KeySpec{}}, {0.3, uniform}};
  slots[0].drift = {3, config::DriftMode::kGradual, 0.2};
  slots[0].nnz = 5;
  slots[0].nnz_distribution = config::NnzDistribution::kUniform;
  slots[0].nnz_min = 0;
  slots[0].bag_keys = config::BagKeys::kDedup;
  slots[1].keys.distribution = config::KeyDistribution::kFbgemmZipf;
  slots[1].keys.zipf_alpha = 1.15;
  slots[1].nnz = 7;
  slots[1].bag_keys = config::BagKeys::kDistinct;
  // Bags of 7 distinct keys among the 5 + i ids of iteration i (fewer while fewer exist).
  slots[1].growth = {.keys_per_iteration = 1, .initial_keys = 5, .hot = config::GrowthOrder::kNewestHot};
  slots[2].keys.distribution = config::KeyDistribution::kHugeCtrPowerLaw;
  slots[2].multi_hot.companions = config::Companions::kPareto;
  slots[2].nnz = 4;
  slots[2].mapping = config::KeyMapping::kPermutation;
  slots[3].keys.distribution = config::KeyDistribution::kDlrmUniform;
  slots[3].nnz = 10;
  slots[3].nnz_distribution = config::NnzDistribution::kDlrm;
  slots[3].bag_keys = config::BagKeys::kDedup;
  d.synthetic.slots = slots;
  return d;
}

// The batch a rank sees when `ranks` ranks split the global batch, concatenated back.
Batch joined_shares(const SyntheticGenerator& gen, std::int64_t iteration, int ranks) {
  Batch whole;
  whole.offsets.clear();
  for (int r = 0; r < ranks; ++r) {
    const Batch part = gen.generate(iteration, r, ranks);
    validate_batch(part);
    const auto base = static_cast<std::int64_t>(whole.keys.size());
    for (std::size_t b = 0; b + 1 < part.offsets.size(); ++b) whole.offsets.push_back(base + part.offsets[b]);
    whole.keys.insert(whole.keys.end(), part.keys.begin(), part.keys.end());
    whole.labels.insert(whole.labels.end(), part.labels.begin(), part.labels.end());
    whole.dense.insert(whole.dense.end(), part.dense.begin(), part.dense.end());
    whole.num_samples += part.num_samples;
  }
  whole.offsets.push_back(static_cast<std::int64_t>(whole.keys.size()));
  return whole;
}

TEST(SyntheticGenerator, OneTwoAndFourRanksSeeTheSameGlobalBatch) {
  const SyntheticGenerator gen(rich_data(), 31, 37);
  for (const std::int64_t iteration : {0, 4, 9}) {
    const Batch one = gen.generate(iteration, 0, 1);
    validate_batch(one);
    for (const int ranks : {2, 4}) {
      const Batch joined = joined_shares(gen, iteration, ranks);
      EXPECT_EQ(joined.offsets, one.offsets) << ranks << " ranks, iteration " << iteration;
      EXPECT_EQ(joined.keys, one.keys) << ranks << " ranks, iteration " << iteration;
      EXPECT_EQ(joined.labels, one.labels);
      EXPECT_EQ(joined.dense, one.dense);
    }
  }
}

TEST(SyntheticGenerator, RichBagsFollowTheirSlotsRules) {
  const auto data = rich_data();
  const SyntheticGenerator gen(data, 31, 200);
  const Batch batch = gen.generate(6, 0, 1);
  std::int64_t empty_bags = 0;
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const auto slot = static_cast<std::int32_t>(b % batch.num_slots);
    const auto keys = batch.bag(b);
    const auto& w = data.synthetic.slots[static_cast<std::size_t>(slot)];
    EXPECT_LE(static_cast<std::int64_t>(keys.size()), w.nnz);
    if (w.nnz_distribution == config::NnzDistribution::kFixed && w.bag_keys == config::BagKeys::kAny) {
      EXPECT_EQ(static_cast<std::int64_t>(keys.size()), w.nnz);
    }
    if (w.bag_keys == config::BagKeys::kDistinct) {
      EXPECT_EQ(static_cast<std::int64_t>(keys.size()), w.nnz);
    }
    empty_bags += keys.empty();
    std::set<Key> distinct(keys.begin(), keys.end());
    if (w.bag_keys != config::BagKeys::kAny) {
      EXPECT_EQ(distinct.size(), keys.size()) << "slot " << slot;
    }
    for (const Key k : keys) {
      EXPECT_GE(k, gen.slot_offset(slot));
      EXPECT_LT(k, gen.slot_offset(slot + 1));
    }
  }
  EXPECT_GT(empty_bags, 0) << "slot 0 draws 0 to 5 keys per bag";
}

TEST(SyntheticGenerator, BatchCycleReplaysAPoolOfBatches) {
  auto data = rich_data();
  data.synthetic.batch_cycle = 3;
  const SyntheticGenerator gen(data, 5, 16);
  EXPECT_EQ(gen.generate(1, 0, 1).keys, gen.generate(7, 0, 1).keys);
  EXPECT_EQ(gen.generate(2, 1, 2).dense, gen.generate(5, 1, 2).dense);
  EXPECT_NE(gen.generate(1, 0, 1).keys, gen.generate(2, 0, 1).keys);
}

TEST(SyntheticGenerator, IsAnUnboundedBatchSource) {
  const auto data = small_data(config::KeyDistribution::kZipf);
  SyntheticGenerator gen(data, 3, 10);
  BatchSource& source = gen;
  EXPECT_EQ(source.iterations_available(10), BatchSource::kUnbounded);
  EXPECT_EQ(source.slot_sizes(), data.slot_size_array);
  // A pure function of the iteration: the source hands out generate()'s shares in any order.
  for (const std::int64_t it : {-2, 4, -1, 0})
    for (int r = 0; r < 3; ++r) {
      const Batch a = source.next_batch(it, r, 3), b = gen.generate(it, r, 3);
      EXPECT_EQ(a.first_sample, b.first_sample);
      EXPECT_EQ(a.keys, b.keys);
      EXPECT_EQ(a.offsets, b.offsets);
    }
}

}  // namespace
}  // namespace embscale::workloads
