#include "sim/lfu_oracle.hpp"

#include <gtest/gtest.h>

#include <string>
#include <utility>

#include "core/error.hpp"
#include "sim/oracle_testing.hpp"

namespace embscale::sim {
namespace {

using namespace testing;  // sim/oracle_testing.hpp: traces, capacities, BruteLru

// Perfect LFU by its definition, with linear scans: every key's count in a vector of pairs, the
// residents with the time of their latest access; the victim is the resident of least
// (count, latest access).
class BruteLfu {
 public:
  explicit BruteLfu(std::int64_t capacity) : capacity_(capacity) {}

  std::int64_t access(const std::vector<std::int64_t>& call) {
    std::int64_t hits = 0;
    for (const std::int64_t key : call) {
      ++time_;
      const std::int64_t c = ++count_ref(key);
      auto it = std::find_if(residents_.begin(), residents_.end(), [&](const Resident& r) { return r.key == key; });
      if (it != residents_.end()) {
        ++hits;
        it->latest = time_;
      } else if (static_cast<std::int64_t>(residents_.size()) < capacity_) {
        residents_.push_back({key, time_});
      } else {
        auto victim = residents_.begin();
        for (auto r = residents_.begin(); r != residents_.end(); ++r) {
          const auto a = std::pair(count(r->key), r->latest);
          const auto b = std::pair(count(victim->key), victim->latest);
          if (a < b) victim = r;
        }
        if (c > count(victim->key)) *victim = {key, time_};
      }
    }
    return hits;
  }

  bool contains(std::int64_t key) const {
    return std::any_of(residents_.begin(), residents_.end(), [&](const Resident& r) { return r.key == key; });
  }
  std::int64_t count(std::int64_t key) const {
    for (const auto& [k, c] : counts_)
      if (k == key) return c;
    return 0;
  }
  std::int64_t size() const { return static_cast<std::int64_t>(residents_.size()); }
  // Every key seen, by count descending then key ascending.
  std::vector<std::int64_t> ranking() const {
    auto sorted = counts_;
    std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
      return a.second != b.second ? a.second > b.second : a.first < b.first;
    });
    std::vector<std::int64_t> keys;
    for (const auto& entry : sorted) keys.push_back(entry.first);
    return keys;
  }

 private:
  struct Resident {
    std::int64_t key;
    std::int64_t latest;
  };
  std::int64_t& count_ref(std::int64_t key) {
    for (auto& [k, c] : counts_)
      if (k == key) return c;
    counts_.emplace_back(key, 0);
    return counts_.back().second;
  }

  std::int64_t capacity_;
  std::int64_t time_ = 0;
  std::vector<std::pair<std::int64_t, std::int64_t>> counts_;
  std::vector<Resident> residents_;
};

TEST(LfuOracle, EveryCallResidentAndCountMatchTheBruteForce) {
  for (const TraceCase& t : trace_cases(11)) {
    const Calls calls = random_calls(t);
    const auto keys = distinct_keys(calls);
    const auto distinct = static_cast<std::int64_t>(keys.size());
    for (const std::int64_t capacity : capacities(distinct)) {
      const std::string where = "trace " + std::to_string(t.seed) + ", capacity " + std::to_string(capacity);
      LfuOracle oracle(capacity);
      BruteLfu brute(capacity);
      for (std::size_t c = 0; c < calls.size(); ++c) {
        ASSERT_EQ(oracle.access(calls[c]), brute.access(calls[c])) << where << ", call " << c;
        ASSERT_EQ(oracle.size(), brute.size()) << where << ", call " << c;
        for (const std::int64_t key : keys) {
          ASSERT_EQ(oracle.contains(key), brute.contains(key)) << where << ", call " << c << ", key " << key;
          ASSERT_EQ(oracle.count(key), brute.count(key)) << where << ", call " << c << ", key " << key;
        }
      }
      EXPECT_EQ(oracle.distinct(), distinct) << where;
      EXPECT_EQ(oracle.count(999999), 0);
      EXPECT_FALSE(oracle.contains(999999));
      const auto ranking = brute.ranking();
      for (const std::int64_t k : {std::int64_t{0}, std::int64_t{1}, std::int64_t{3}, distinct, distinct + 5}) {
        const auto expected = std::vector<std::int64_t>(ranking.begin(), ranking.begin() + std::min(k, distinct));
        EXPECT_EQ(oracle.top_keys(k), expected) << where << ", top " << k;
      }
    }
  }
}

TEST(LfuOracle, HandmadeCalls) {
  // Capacity 2. Counts after [1 2] [1] [3]: 1:2, 2:1, 3:1; 3 ties 2 and stays out. [3] again: 3
  // counts 2 > 1 and replaces 2 (the smallest count); [2] counts 2 = the smallest resident count
  // (3's 2 and 1's 2): ties keep the residents.
  LfuOracle oracle(2);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{1, 2}), 0);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{1}), 1);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{3}), 0);
  EXPECT_FALSE(oracle.contains(3));
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{3}), 0);
  EXPECT_TRUE(oracle.contains(3));
  EXPECT_FALSE(oracle.contains(2));
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{2}), 0);
  EXPECT_FALSE(oracle.contains(2));
  EXPECT_EQ(oracle.count(2), 2);
  // Then 2 counts 3 > 2: it replaces the resident of count 2 accessed least recently, 1 (at
  // the second call) rather than 3 (at the fourth).
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{2}), 0);
  EXPECT_TRUE(oracle.contains(2));
  EXPECT_TRUE(oracle.contains(3));
  EXPECT_FALSE(oracle.contains(1));
  EXPECT_EQ(oracle.top_keys(3), (std::vector<std::int64_t>{2, 1, 3}));  // 3, then 2 and 2 by key
}

TEST(LfuOracle, RefusesAnEmptyCache) { EXPECT_THROW(LfuOracle(0), Error); }

}  // namespace
}  // namespace embscale::sim
