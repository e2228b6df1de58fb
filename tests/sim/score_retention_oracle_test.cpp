#include "sim/score_retention_oracle.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "core/error.hpp"
#include "sim/lru_oracle.hpp"
#include "sim/oracle_testing.hpp"

namespace embscale::sim {
namespace {

using kv::ScoreStrategy;
using namespace testing;  // sim/oracle_testing.hpp: traces, capacities, BruteLru

// The rules of lib/kv/README.md's "Score strategies" table, written out again per strategy (not
// through kv/score_rules.hpp), on one global table: a vector of residents and linear scans. The
// call counter stands for the clock and the step, as the oracle documents. `remember`: every key
// keeps its score when it leaves (ScoreMemory::kEveryKey) and returns as a hit on it would score.
class BruteScoreTable {
 public:
  BruteScoreTable(std::int64_t capacity, ScoreStrategy strategy, bool remember = false)
      : capacity_(capacity), strategy_(strategy), remember_(remember) {}

  void set_epoch(std::uint32_t epoch) { epoch_ = epoch; }
  void set_score(std::uint64_t score) { custom_ = score; }

  std::int64_t access(const std::vector<std::int64_t>& call) {
    ++calls_;
    const std::uint64_t high = std::uint64_t{epoch_} << 32;
    constexpr std::uint64_t kLow = 0xFFFFFFFFULL;
    std::int64_t hits = 0;
    for (const std::int64_t key : call) {
      std::uint64_t fresh = 0;
      switch (strategy_) {
        case ScoreStrategy::kTimestamp:
        case ScoreStrategy::kStep: fresh = calls_; break;
        case ScoreStrategy::kCustomized: fresh = custom_; break;
        case ScoreStrategy::kLfu: fresh = 1; break;
        case ScoreStrategy::kEpochLru: fresh = high | (calls_ & kLow); break;
        case ScoreStrategy::kEpochLfu: fresh = high | 1; break;
        case ScoreStrategy::kFrequency: fresh = ++sightings_[key]; break;  // the exact count, this one included
      }
      const auto touched = [&](std::uint64_t old) {
        if (strategy_ == ScoreStrategy::kLfu || strategy_ == ScoreStrategy::kFrequency)
          return old == ~std::uint64_t{0} ? old : old + 1;
        if (strategy_ == ScoreStrategy::kEpochLfu)
          return (old >> 32) != epoch_ ? (high | 1) : (old & kLow) == kLow ? old : old + 1;
        return fresh;
      };
      const auto it = std::find_if(residents_.begin(), residents_.end(), [&](const Entry& e) { return e.key == key; });
      if (it != residents_.end()) {
        ++hits;
        it->score = touched(it->score);
        continue;
      }
      if (remember_ && gone_.count(key)) fresh = touched(gone_[key]);
      if (static_cast<std::int64_t>(residents_.size()) < capacity_) {
        residents_.push_back({key, fresh});
        continue;
      }
      auto victim = residents_.begin();
      for (auto e = residents_.begin(); e != residents_.end(); ++e) {
        const bool lower = e->score != victim->score
                               ? e->score < victim->score
                               : static_cast<std::uint64_t>(e->key) < static_cast<std::uint64_t>(victim->key);
        if (lower) victim = e;
      }
      if (fresh >= victim->score) {
        gone_[victim->key] = victim->score;
        *victim = {key, fresh};
      } else {
        ++refused_;
        gone_[key] = fresh;
      }
    }
    return hits;
  }

  std::optional<std::uint64_t> score(std::int64_t key) const {
    for (const Entry& e : residents_)
      if (e.key == key) return e.score;
    return std::nullopt;
  }
  std::vector<std::int64_t> keys() const {
    std::vector<std::int64_t> out;
    for (const Entry& e : residents_) out.push_back(e.key);
    std::sort(out.begin(), out.end());
    return out;
  }
  std::int64_t refused() const { return refused_; }

 private:
  struct Entry {
    std::int64_t key;
    std::uint64_t score;
  };
  std::int64_t capacity_;
  ScoreStrategy strategy_;
  bool remember_;
  std::map<std::int64_t, std::uint64_t> gone_;       // the scores of keys not resident (read when remember_)
  std::map<std::int64_t, std::uint64_t> sightings_;  // FREQUENCY: accesses of each key so far
  std::uint64_t calls_ = 0;
  std::uint32_t epoch_ = 0;
  std::uint64_t custom_ = 0;
  std::int64_t refused_ = 0;
  std::vector<Entry> residents_;
};

std::vector<std::int64_t> resident_keys(const ScoreRetentionOracle& oracle) {
  std::vector<std::int64_t> keys;
  oracle.for_each_key([&](std::int64_t key) { keys.push_back(key); });
  std::sort(keys.begin(), keys.end());
  return keys;
}

TEST(ScoreRetentionOracle, EveryStrategyAndMemoryMatchesTheBruteForce) {
  for (const ScoreMemory memory : {ScoreMemory::kResidents, ScoreMemory::kEveryKey})
    for (const ScoreStrategy strategy : kv::kScoreStrategies) {
      for (const TraceCase& t : trace_cases(21)) {
        const Calls calls = random_calls(t);
        const auto keys = distinct_keys(calls);
        for (const std::int64_t capacity : capacities(static_cast<std::int64_t>(keys.size()))) {
          const bool remember = memory == ScoreMemory::kEveryKey;
          const std::string where = std::string(kv::score_rules(strategy).name) + ", trace " + std::to_string(t.seed) +
                                    ", capacity " + std::to_string(capacity) +
                                    (remember ? ", every key" : ", residents");
          ScoreRetentionOracle oracle(capacity, strategy, memory);
          BruteScoreTable brute(capacity, strategy, remember);
          for (std::size_t c = 0; c < calls.size(); ++c) {
            // Epochs advance every 7 calls; the custom score wanders up and down (both heap moves).
            const auto epoch = static_cast<std::uint32_t>(c / 7);
            const std::uint64_t custom = (c * 7919) % 41;
            oracle.set_epoch(epoch);
            brute.set_epoch(epoch);
            oracle.set_score(custom);
            brute.set_score(custom);
            ASSERT_EQ(oracle.access(calls[c]), brute.access(calls[c])) << where << ", call " << c;
            ASSERT_EQ(resident_keys(oracle), brute.keys()) << where << ", call " << c;
            for (const std::int64_t key : keys) {
              ASSERT_EQ(oracle.contains(key), brute.score(key).has_value()) << where << ", key " << key;
              ASSERT_EQ(oracle.score(key), brute.score(key)) << where << ", call " << c << ", key " << key;
            }
          }
          EXPECT_EQ(oracle.size(), static_cast<std::int64_t>(brute.keys().size())) << where;
          EXPECT_EQ(oracle.refused(), brute.refused()) << where;
          EXPECT_FALSE(oracle.contains(999999));
        }
      }
    }
}

// With one key per call every key has its own step, so nothing ties: STEP is LRU exactly (and
// TIMESTAMP, whose clock the oracle models by the same counter).
TEST(ScoreRetentionOracle, StepWithOneKeyPerCallIsLru) {
  const Calls calls = random_calls(31, 3000, 1, 200, 1.0);
  for (const ScoreStrategy strategy : {ScoreStrategy::kStep, ScoreStrategy::kTimestamp}) {
    for (const std::int64_t capacity : {1, 2, 10, 64, 199, 400}) {
      ScoreRetentionOracle oracle(capacity, strategy);
      LruOracle lru(capacity);
      for (std::size_t c = 0; c < calls.size(); ++c) {
        ASSERT_EQ(oracle.access(calls[c]), lru.access(calls[c])) << "capacity " << capacity << ", call " << c;
        ASSERT_EQ(oracle.contains(calls[c][0]), lru.contains(calls[c][0]));
      }
      EXPECT_EQ(oracle.refused(), 0);  // a new step is never lower than a resident's
    }
  }
}

// The documented difference: inside a call every key has the call's step, so among the oldest
// call's keys the smallest goes first, where LRU evicts the one accessed first.
TEST(ScoreRetentionOracle, StepBreaksTiesInsideACallBySmallestKeyWhereLruTakesTheFirstAccessed) {
  const std::vector<std::vector<std::int64_t>> calls = {{5, 3}, {7}, {5}};
  ScoreRetentionOracle step(2, ScoreStrategy::kStep);
  BruteLru lru(2);
  // [5 3] fills both; [7] evicts 3 under STEP (5 and 3 share step 1, 3 is smaller), 5 under LRU.
  EXPECT_EQ(step.access(calls[0]), lru.access(calls[0]));
  EXPECT_EQ(step.access(calls[1]), lru.access(calls[1]));
  EXPECT_TRUE(step.contains(5));
  EXPECT_FALSE(step.contains(3));
  EXPECT_EQ(lru.residents(), (std::vector<std::int64_t>{3, 7}));
  // So [5] hits under STEP and misses under LRU.
  EXPECT_EQ(step.access(calls[2]), 1);
  EXPECT_EQ(lru.access(calls[2]), 0);

  // A call longer than the table: its own newcomers tie with the keys it inserted (same step, not
  // lower) and replace the smallest of them; LRU keeps the last ones.
  ScoreRetentionOracle step2(2, ScoreStrategy::kStep);
  BruteLru lru2(2);
  const std::vector<std::int64_t> long_call = {3, 1, 2};
  step2.access(long_call);
  lru2.access(long_call);
  EXPECT_EQ(resident_keys(step2), (std::vector<std::int64_t>{2, 3}));  // 2 replaced 1
  EXPECT_EQ(lru2.residents(), (std::vector<std::int64_t>{1, 2}));
}

TEST(ScoreRetentionOracle, LfuScoresRefuseNewcomersOnceEveryResidentWasSeenTwice) {
  // Capacity 2: 1 and 2 reach count 2; newcomer 3 scores 1 < 2 and is refused.
  ScoreRetentionOracle oracle(2, ScoreStrategy::kLfu);
  oracle.access(std::vector<std::int64_t>{1, 2});
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{2, 1}), 2);
  EXPECT_EQ(oracle.access(std::vector<std::int64_t>{3}), 0);
  EXPECT_FALSE(oracle.contains(3));
  EXPECT_EQ(oracle.refused(), 1);
  EXPECT_EQ(oracle.score(1), 2u);
}

TEST(ScoreRetentionOracle, RefusesAnEmptyTable) { EXPECT_THROW(ScoreRetentionOracle(0, ScoreStrategy::kStep), Error); }

}  // namespace
}  // namespace embscale::sim
