#include "workloads/key_index.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <random>

namespace embscale::workloads {
namespace {

// Ids in order of first appearance and find() for keys present and absent, against a std::map,
// through several doublings of the table (starting at 1024 slots) and with extreme keys.
TEST(KeyIndex, NumbersKeysInOrderOfFirstAppearanceAndFindsThem) {
  std::mt19937_64 rng(5);
  std::map<Key, std::uint32_t> reference;
  KeyIndex index;
  EXPECT_FALSE(index.find(0).has_value());  // empty table
  for (int i = 0; i < 20000; ++i) {
    Key key = static_cast<Key>(rng() % 6000) - 3000;
    if (i % 1000 == 0) key = i % 2000 == 0 ? INT64_MIN : INT64_MAX;
    bool inserted = false;
    const std::uint32_t id = index.find_or_insert(key, inserted);
    const auto [it, is_new] = reference.emplace(key, static_cast<std::uint32_t>(reference.size()));
    ASSERT_EQ(inserted, is_new) << key;
    ASSERT_EQ(id, it->second) << key;
    index.prefetch(key + 1);  // a hint: changes nothing
  }
  EXPECT_EQ(index.size(), reference.size());
  for (Key key = -3100; key < 3100; ++key) {
    const auto it = reference.find(key);
    const auto found = index.find(key);
    ASSERT_EQ(found.has_value(), it != reference.end()) << key;
    if (found) {
      EXPECT_EQ(*found, it->second) << key;
    }
  }
  EXPECT_EQ(index.find(INT64_MIN), reference.at(INT64_MIN));
}

// find_or_insert_all numbers a batch exactly as one find_or_insert per key would, across growth.
TEST(KeyIndex, BatchesNumberAsOneKeyAtATime) {
  std::mt19937_64 rng(6);
  KeyIndex one, batched;
  std::vector<Key> keys;
  std::vector<std::uint32_t> ids;
  for (int batch = 0; batch < 60; ++batch) {
    keys.resize(1 + rng() % 700);
    for (Key& key : keys) key = static_cast<Key>(rng() % 20000);
    ids.assign(keys.size() + 3, 7);
    batched.find_or_insert_all(keys, ids);
    bool inserted = false;
    for (std::size_t i = 0; i < keys.size(); ++i)
      ASSERT_EQ(ids[i], one.find_or_insert(keys[i], inserted)) << batch << ", " << i;
    EXPECT_EQ(ids[keys.size()], 7u);  // nothing written past the batch
    EXPECT_EQ(batched.size(), one.size());
  }
}

}  // namespace
}  // namespace embscale::workloads
