#include "sim/lru_oracle.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"
#include "sim/oracle_testing.hpp"

namespace embscale::sim {
namespace {

using namespace testing;  // sim/oracle_testing.hpp: traces, capacities, BruteLru

TEST(LruOracle, EveryCallAndResidentMatchTheBruteForce) {
  for (const TraceCase& t : trace_cases(1)) {
    const Calls calls = random_calls(t);
    const auto keys = distinct_keys(calls);
    for (const std::int64_t capacity : capacities(static_cast<std::int64_t>(keys.size()))) {
      const std::string where = "trace " + std::to_string(t.seed) + ", capacity " + std::to_string(capacity);
      LruOracle oracle(capacity);
      BruteLru brute(capacity);
      for (std::size_t c = 0; c < calls.size(); ++c) {
        ASSERT_EQ(oracle.access(calls[c]), brute.access(calls[c])) << where << ", call " << c;
        ASSERT_EQ(oracle.size(), static_cast<std::int64_t>(brute.residents().size())) << where << ", call " << c;
        for (const std::int64_t key : keys) {
          const bool resident =
              std::find(brute.residents().begin(), brute.residents().end(), key) != brute.residents().end();
          ASSERT_EQ(oracle.contains(key), resident) << where << ", call " << c << ", key " << key;
        }
      }
      EXPECT_FALSE(oracle.contains(123456789)) << where;  // never seen
      EXPECT_EQ(oracle.capacity(), capacity);
    }
  }
}

TEST(LruOracle, HitRatioAtAnyCapacityMatchesTheBruteForceAtThatCapacity) {
  for (const TraceCase& t : trace_cases(11)) {
    const Calls calls = random_calls(t);
    LruOracle oracle(4);
    std::int64_t accesses = 0;
    for (const auto& call : calls) {
      oracle.access(call);
      accesses += static_cast<std::int64_t>(call.size());
    }
    EXPECT_EQ(oracle.accesses(), accesses);
    for (const std::int64_t capacity : capacities(static_cast<std::int64_t>(distinct_keys(calls).size()))) {
      BruteLru brute(capacity);
      std::int64_t hits = 0;
      for (const auto& call : calls) hits += brute.access(call);
      EXPECT_DOUBLE_EQ(oracle.hit_ratio_at(capacity), static_cast<double>(hits) / static_cast<double>(accesses))
          << "trace " << t.seed << ", capacity " << capacity;
    }
  }
}

TEST(LruOracle, HandmadeCalls) {
  // Capacity 2. [1 2] misses twice; [3] evicts 1; [2 1] hits 2 (distance 1), misses 1 (evicted),
  // which evicts 3: {2, 1} remain.
  LruOracle oracle(2);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{1, 2}), 0);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{3}), 0);
  EXPECT_FALSE(oracle.contains(1));
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{2, 1}), 1);
  EXPECT_TRUE(oracle.contains(2));
  EXPECT_TRUE(oracle.contains(1));
  EXPECT_FALSE(oracle.contains(3));
  EXPECT_EQ(oracle.size(), 2);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{}), 0);  // an empty call changes nothing
  EXPECT_DOUBLE_EQ(oracle.hit_ratio_at(3), 2.0 / 5.0);       // 2's and 1's reuses both hit with 3 keys
}

TEST(LruOracle, RefusesAnEmptyCache) { EXPECT_THROW(LruOracle(0), Error); }

}  // namespace
}  // namespace embscale::sim
