// MappedStorage against a std::map on randomized batches with fixed seeds (repeated keys, erase
// of absent keys), its rows in an unnamed file of a real directory; for_each visits every entry
// once; past its capacity it drops entries and says how many.
#include "kv/mapped_storage.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>

namespace embscale::kv {
namespace {

constexpr std::int64_t kWidth = 3;

struct Entry {
  std::uint64_t score;
  std::vector<float> row;
  bool operator==(const Entry&) const = default;
};

TEST(MappedStorage, BehavesAsADictionaryWithScores) {
  MappedStorage storage(kWidth, 1 << 12, std::filesystem::temp_directory_path().string(), 16);
  EXPECT_EQ(storage.describe().rfind("mapped:", 0), 0u);
  std::map<std::uint64_t, Entry> reference;
  std::mt19937_64 rng(3);
  const auto w = static_cast<std::size_t>(kWidth);
  for (int call = 0; call < 300; ++call) {
    const std::size_t n = rng() % 40;
    std::vector<std::uint64_t> keys(n), scores(n);
    std::vector<float> values(n * w);
    for (auto& k : keys) k = rng() % 700;
    for (auto& s : scores) s = rng();
    for (auto& v : values) v = static_cast<float>(rng() % 100);
    if (rng() % 3) {
      EXPECT_EQ(storage.insert(keys, values, scores), 0);
      for (std::size_t i = 0; i < n; ++i)
        reference[keys[i]] = {
            scores[i], {values.begin() + static_cast<long>(i * w), values.begin() + static_cast<long>((i + 1) * w)}};
    } else {
      std::int64_t expected = 0;
      for (const auto k : keys) expected += static_cast<std::int64_t>(reference.erase(k));
      EXPECT_EQ(storage.erase(keys), expected);
    }
    ASSERT_EQ(storage.size(), static_cast<std::int64_t>(reference.size()));
  }
  std::map<std::uint64_t, Entry> seen;
  storage.for_each(
      [&](std::span<const std::uint64_t> keys, std::span<const float> values, std::span<const std::uint64_t> scores) {
        for (std::size_t i = 0; i < keys.size(); ++i) {
          const bool fresh = seen.emplace(keys[i], Entry{scores[i],
                                                         {values.begin() + static_cast<long>(i * w),
                                                          values.begin() + static_cast<long>((i + 1) * w)}})
                                 .second;
          EXPECT_TRUE(fresh) << "key " << keys[i] << " visited twice";
        }
      });
  EXPECT_EQ(seen, reference);
}

TEST(MappedStorage, PastItsCapacityItDropsEntriesAndCountsThem) {
  MappedStorage storage(kWidth, 64, std::filesystem::temp_directory_path().string(), 16);
  std::vector<std::uint64_t> keys(1000), scores(1000);
  for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = scores[k] = k;
  const std::vector<float> values(keys.size() * kWidth, 1.0f);
  const std::int64_t dropped = storage.insert(keys, values, scores);
  EXPECT_LE(storage.size(), 64);
  EXPECT_EQ(dropped + storage.size(), 1000);
}

}  // namespace
}  // namespace embscale::kv
