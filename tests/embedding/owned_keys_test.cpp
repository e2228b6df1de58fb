// OwnedKeys against a brute-force list of the owned keys, on random strided ranges.
#include <gtest/gtest.h>

#include <map>
#include <random>

#include "embedding/owned_keys.hpp"

namespace embscale::embedding {
namespace {

TEST(OwnedKeys, RowsAndKeysMatchABruteForceListOnRandomRanges) {
  std::mt19937_64 rng(20261124);
  for (int trial = 0; trial < 200; ++trial) {
    OwnedKeys owned;
    std::map<Key, std::int64_t> expected;  // key -> row
    Key at = static_cast<Key>(rng() % 5);
    const int ranges = 1 + static_cast<int>(rng() % 6);
    const Key stride = 1 + static_cast<Key>(rng() % 4);
    for (int r = 0; r < ranges; ++r) {
      const Key begin = at + static_cast<Key>(rng() % 3);
      const Key end = begin + static_cast<Key>(rng() % 30);
      owned.add(begin, end, stride);
      for (Key k = begin; k < end; k += stride) expected.emplace(k, static_cast<std::int64_t>(expected.size()));
      at = end;
    }
    ASSERT_EQ(owned.rows(), static_cast<std::int64_t>(expected.size()));
    for (Key k = 0; k < at + 5; ++k) {
      const auto it = expected.find(k);
      EXPECT_EQ(owned.row_of(k), it == expected.end() ? -1 : it->second) << "key " << k << ", trial " << trial;
    }
    for (const auto& [key, row] : expected) EXPECT_EQ(owned.key_of(row), key);
    // one_block: only for consecutive keys, starting at the first; always for stride 1 (adjacent
    // ranges merge), where row_of(key) is then key - begin.
    const bool consecutive = !expected.empty() && expected.rbegin()->first - expected.begin()->first + 1 ==
                                                      static_cast<Key>(expected.size());
    const auto block = owned.one_block();
    if (block) {
      EXPECT_TRUE(consecutive) << "trial " << trial;
      EXPECT_EQ(*block, expected.begin()->first) << "trial " << trial;
    }
    if (stride == 1 && consecutive) {
      EXPECT_TRUE(block.has_value()) << "trial " << trial;
    }
  }
}

TEST(OwnedKeys, KeyModuloRanksOverContiguousSlotsIsOneRange) {
  // Slots [0, 10), [10, 17), [17, 40) on rank 1 of 3: keys 1, 4, ..., 37 continue one progression.
  OwnedKeys owned;
  owned.add(1, 10, 3);
  owned.add(10, 17, 3);
  owned.add(19, 40, 3);
  EXPECT_EQ(owned.rows(), 13);
  EXPECT_EQ(owned.row_of(37), 12);
  EXPECT_EQ(owned.row_of(38), -1);
  EXPECT_EQ(owned.key_of(5), 16);
}

// The plain-data ranges the device reads (portable/rows_ref.hpp) give OwnedKeys' own rows and keys.
TEST(OwnedKeys, ThePortableRangesGiveTheSameRowsAndKeys) {
  OwnedKeys owned;
  owned.add(1, 900, 3);
  owned.add(1000, 1400);
  owned.add(2000, 2100, 7);
  const auto ranges = owned.portable_ranges();
  for (Key key = -5; key < 2200; ++key)
    ASSERT_EQ(portable::row_of(ranges.data(), ranges.size(), key), owned.row_of(key)) << "key " << key;
  for (std::int64_t row = 0; row < owned.rows(); ++row)
    ASSERT_EQ(portable::key_of(ranges.data(), ranges.size(), row), owned.key_of(row)) << "row " << row;
}

}  // namespace
}  // namespace embscale::embedding
