#include "embedding/key_router.hpp"

#include <gtest/gtest.h>

#include <set>

#include "core/rng.hpp"

namespace embscale::embedding {
namespace {

TEST(RouteKeys, DeduplicatesGroupsByOwnerAndInvertsExactly) {
  const CounterRng rng(17, 0);
  for (int ranks : {1, 2, 3, 4}) {
    std::vector<Key> keys(500);
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = static_cast<Key>(rng.bits64(i) % 120);
    const ModuloSharding sharding{ranks};
    const RoutedKeys routed = route_keys(keys, sharding);

    // Brute-force oracle: the distinct keys, and how many each owner gets.
    const std::set<Key> distinct(keys.begin(), keys.end());
    EXPECT_EQ(routed.send_keys.size(), distinct.size());
    std::size_t pos = 0;
    for (int r = 0; r < ranks; ++r) {
      std::size_t expected = 0;
      for (const Key k : distinct) expected += sharding.owner(k) == r;
      ASSERT_EQ(routed.send_counts[static_cast<std::size_t>(r)], expected);
      for (std::size_t i = 0; i < expected; ++i, ++pos) {
        EXPECT_EQ(sharding.owner(routed.send_keys[pos]), r);
        if (i > 0) {
          EXPECT_LT(routed.send_keys[pos - 1], routed.send_keys[pos]);
        }
      }
    }
    for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(routed.send_keys[routed.inverse[i]], keys[i]);
  }
}

TEST(RouteKeys, EmptyBatch) {
  const RoutedKeys routed = route_keys({}, ModuloSharding{3});
  EXPECT_TRUE(routed.send_keys.empty());
  EXPECT_EQ(routed.send_counts, (std::vector<std::size_t>{0, 0, 0}));
}

}  // namespace
}  // namespace embscale::embedding
