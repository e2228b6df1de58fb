// The batch partition: every key exactly once, grouped by contiguous bucket ranges, input order
// kept inside each group (what makes the parallel path equal to one key at a time).
#include <gtest/gtest.h>

#include <random>

#include "kv/bucket_partition.hpp"

namespace embscale::kv {
namespace {

TEST(BucketPartition, StableCompleteAndGroupedByBucketRange) {
  std::mt19937_64 rng(3);
  for (const std::int64_t buckets : {1, 2, 64, 1024}) {
    for (const std::size_t groups : {1u, 3u, 16u}) {
      std::vector<std::uint64_t> keys(5000);
      for (auto& k : keys) k = rng() % 3000;  // duplicates too
      const auto p = partition_by_bucket(keys, buckets, groups);
      ASSERT_EQ(p.groups(), groups);
      ASSERT_EQ(p.order.size(), keys.size());
      std::vector<int> seen(keys.size(), 0);
      for (std::size_t g = 0; g < groups; ++g)
        for (std::size_t at = p.starts[g]; at < p.starts[g + 1]; ++at) {
          const auto i = p.order[at];
          ++seen[i];
          const auto b = static_cast<std::size_t>(bucket_of(keys[i], buckets));
          EXPECT_EQ(b * groups / static_cast<std::size_t>(buckets), g) << "key " << keys[i];
          if (at > p.starts[g]) {
            EXPECT_LT(p.order[at - 1], i) << "input order inside group " << g;
          }
        }
      EXPECT_EQ(std::count(seen.begin(), seen.end(), 1), static_cast<long>(keys.size()));
    }
  }
}

}  // namespace
}  // namespace embscale::kv
