// Sub-batches and distinct keys of the tiered tables, against plain loops on random batches.
#include "kv/tier_batch.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace embscale::kv {
namespace {

TEST(TierBatch, DistinctKeysTakeTheFirstOrLastOccurrenceInBatchOrder) {
  std::mt19937_64 rng(8);
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<std::uint64_t> keys(rng() % 60);
    for (auto& k : keys) k = rng() % 20;
    for (const bool keep_last : {false, true}) {
      const DistinctKeys d = distinct_keys(keys, keep_last);
      std::map<std::uint64_t, std::uint32_t> first, last;
      std::vector<std::uint64_t> order;  // keys by first occurrence
      for (std::uint32_t i = 0; i < keys.size(); ++i) {
        if (first.emplace(keys[i], i).second) order.push_back(keys[i]);
        last[keys[i]] = i;
      }
      ASSERT_EQ(d.keys, order);
      ASSERT_EQ(d.slot_of.size(), keys.size());
      for (std::size_t j = 0; j < d.size(); ++j) EXPECT_EQ(d.source[j], keep_last ? last[d.keys[j]] : first[d.keys[j]]);
      for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(d.keys[d.slot_of[i]], keys[i]);
    }
  }
}

TEST(TierBatch, GatherThenScatterPutsRowsBackWhereTheyCameFrom) {
  const std::size_t w = 3;
  std::vector<float> whole(10 * w);
  for (std::size_t i = 0; i < whole.size(); ++i) whole[i] = static_cast<float>(i);
  SubBatch part;
  for (const std::uint32_t p : {1u, 4u, 7u}) part.add(p, 100 + p);
  part.gather_rows(whole, w);
  EXPECT_EQ(part.rows, (std::vector<float>{3, 4, 5, 12, 13, 14, 21, 22, 23}));
  std::vector<float> out(10 * w, -1.0f);
  const std::vector<std::uint8_t> keep{1, 0, 1};
  part.scatter_rows(out, w, keep);
  for (std::size_t i = 0; i < 10; ++i)
    for (std::size_t d = 0; d < w; ++d) EXPECT_EQ(out[i * w + d], (i == 1 || i == 7) ? whole[i * w + d] : -1.0f) << i;
}

}  // namespace
}  // namespace embscale::kv
