#include "sim/belady_oracle.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "sim/lfu_oracle.hpp"
#include "sim/lru_oracle.hpp"
#include "sim/oracle_testing.hpp"
#include "sim/score_retention_oracle.hpp"

namespace embscale::sim {
namespace {

using namespace testing;  // sim/oracle_testing.hpp: traces, capacities, BruteLru

std::vector<std::int64_t> flatten(const Calls& calls) {
  std::vector<std::int64_t> stream;
  for (const auto& call : calls) stream.insert(stream.end(), call.begin(), call.end());
  return stream;
}

// MIN with bypass by its definition: on a miss with the cache full, scan forward for every
// resident's next use and the newcomer's; the farthest (never = past the end) stays out.
std::vector<std::int64_t> brute_min_hits_per_call(const Calls& calls, std::int64_t capacity) {
  const auto stream = flatten(calls);
  const auto next_use = [&](std::int64_t key, std::size_t after) {
    for (std::size_t u = after + 1; u < stream.size(); ++u)
      if (stream[u] == key) return u;
    return stream.size();  // never
  };
  std::vector<std::int64_t> residents, hits;
  std::size_t t = 0;
  for (const auto& call : calls) {
    std::int64_t call_hits = 0;
    for (std::size_t i = 0; i < call.size(); ++i, ++t) {
      const std::int64_t key = stream[t];
      if (std::find(residents.begin(), residents.end(), key) != residents.end()) {
        ++call_hits;
      } else if (static_cast<std::int64_t>(residents.size()) < capacity) {
        residents.push_back(key);
      } else {
        std::size_t farthest = 0;
        for (std::size_t r = 1; r < residents.size(); ++r)
          if (next_use(residents[r], t) > next_use(residents[farthest], t)) farthest = r;
        if (next_use(key, t) < next_use(residents[farthest], t)) residents[farthest] = key;
      }
    }
    hits.push_back(call_hits);
  }
  return hits;
}

// The most hits of ANY policy, by exhaustive search over the cache's contents: at a miss it may
// leave the newcomer out, or put it in (evicting any one resident when full). Evicting more, or
// at other times, never helps (an eviction can always wait for the next miss). Keys < 16.
std::int64_t best_possible_hits(const std::vector<std::int64_t>& stream, std::int64_t capacity) {
  std::map<std::pair<std::size_t, unsigned>, std::int64_t> memo;
  const auto best = [&](auto&& self, std::size_t t, unsigned resident) -> std::int64_t {
    if (t == stream.size()) return 0;
    const auto it = memo.find({t, resident});
    if (it != memo.end()) return it->second;
    const unsigned bit = 1u << stream[t];
    std::int64_t result = 0;
    if (resident & bit) {
      result = 1 + self(self, t + 1, resident);
    } else {
      result = self(self, t + 1, resident);  // bypass
      if (std::popcount(resident) < capacity) {
        result = std::max(result, self(self, t + 1, resident | bit));
      } else {
        for (unsigned victim = 1; victim != 0 && victim <= resident; victim <<= 1)
          if (resident & victim) result = std::max(result, self(self, t + 1, (resident & ~victim) | bit));
      }
    }
    memo[{t, resident}] = result;
    return result;
  };
  return best(best, 0, 0);
}

std::int64_t total(const std::vector<std::int64_t>& v) { return std::accumulate(v.begin(), v.end(), std::int64_t{0}); }

BeladyOracle recorded(const Calls& calls) {
  BeladyOracle oracle;
  for (const auto& call : calls) oracle.append(call);
  return oracle;
}

TEST(BeladyOracle, EveryCallMatchesTheBruteForce) {
  for (const TraceCase& t : trace_cases(41)) {
    const Calls calls = random_calls(t);
    const BeladyOracle oracle = recorded(calls);
    const auto distinct = static_cast<std::int64_t>(distinct_keys(calls).size());
    EXPECT_EQ(oracle.accesses(), static_cast<std::int64_t>(flatten(calls).size()));
    EXPECT_EQ(oracle.calls(), static_cast<std::int64_t>(calls.size()));
    EXPECT_EQ(oracle.distinct(), distinct);
    for (const std::int64_t capacity : capacities(distinct)) {
      EXPECT_EQ(oracle.hits_per_call(capacity), brute_min_hits_per_call(calls, capacity))
          << "trace " << t.seed << ", capacity " << capacity;
    }
    // Large enough to hold everything: every access but the first of each key hits.
    EXPECT_EQ(total(oracle.hits_per_call(distinct + 2)), oracle.accesses() - distinct);
  }
}

TEST(BeladyOracle, NoPolicyDoesBetterOnTinyTraces) {
  // Exhaustive search is exponential: streams of 14 accesses over 5 keys, 200 of them.
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    Calls calls = random_calls(1000 + seed, 14, 1, 5, static_cast<double>(seed % 3));
    std::vector<std::int64_t> stream;  // ids 0..4: the keys are 37 id - 100
    for (auto& call : calls) stream.push_back((call[0] + 100) / 37);
    const BeladyOracle oracle = recorded(calls);
    for (const std::int64_t capacity : {1, 2, 3, 4}) {
      EXPECT_EQ(total(oracle.hits_per_call(capacity)), best_possible_hits(stream, capacity))
          << "seed " << seed << ", capacity " << capacity;
    }
  }
}

TEST(BeladyOracle, BoundsEveryOnlineOracle) {
  for (const TraceCase& t : trace_cases(91)) {
    const Calls calls = random_calls(t);
    const BeladyOracle belady = recorded(calls);
    for (const std::int64_t capacity : {1, 2, 4, 8, 16, 32}) {
      LruOracle lru(capacity);
      LfuOracle lfu(capacity);
      std::vector<ScoreRetentionOracle> scored;
      for (const auto strategy : kv::kScoreStrategies) scored.emplace_back(capacity, strategy);
      std::int64_t lru_hits = 0, lfu_hits = 0;
      std::vector<std::int64_t> scored_hits(scored.size(), 0);
      for (const auto& call : calls) {
        lru_hits += lru.access(call);
        lfu_hits += lfu.access(call);
        for (std::size_t s = 0; s < scored.size(); ++s) scored_hits[s] += scored[s].access(call);
      }
      const std::int64_t best = total(belady.hits_per_call(capacity));
      const std::string where = "trace " + std::to_string(t.seed) + ", capacity " + std::to_string(capacity);
      EXPECT_GE(best, lru_hits) << where;
      EXPECT_GE(best, lfu_hits) << where;
      for (std::size_t s = 0; s < scored.size(); ++s) EXPECT_GE(best, scored_hits[s]) << where << ", strategy " << s;
    }
  }
}

TEST(BeladyOracle, HandmadeBypass) {
  // Capacity 1: 1 2 1. MIN keeps 1 and leaves 2 out (2 is never used again): one hit. A policy
  // that must insert 2 would lose it.
  BeladyOracle oracle;
  oracle.append(std::vector<std::int64_t>{1});
  oracle.append(std::vector<std::int64_t>{2});
  oracle.append(std::vector<std::int64_t>{1});
  EXPECT_EQ(oracle.hits_per_call(1), (std::vector<std::int64_t>{0, 0, 1}));
}

TEST(BeladyOracle, EmptyAndBadInput) {
  BeladyOracle oracle;
  EXPECT_TRUE(oracle.hits_per_call(4).empty());
  oracle.append(std::vector<std::int64_t>{});
  EXPECT_EQ(oracle.hits_per_call(4), (std::vector<std::int64_t>{0}));
  EXPECT_THROW(oracle.hits_per_call(0), Error);
}

}  // namespace
}  // namespace embscale::sim
