// kv/score_rules.hpp against lib/kv/README.md's "Score strategies" table. Each test below is one
// column of that table, written out here as numbers from the table's words (not from the code):
// fixed inputs (an epoch, a clock, a set_score value, a step counter, old scores), and per
// strategy what the README says comes out. The last test runs the same rows through a HostTable,
// so the table's calls are held to them too, not only the functions.
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kv/host_table.hpp"
#include "kv/score_rules.hpp"
#include "kv/table_file_format.hpp"

namespace embscale::kv {
namespace {

constexpr std::uint64_t kEpoch = 3;
constexpr std::uint64_t kEpochHigh = kEpoch << 32;
constexpr std::uint64_t kClock = 0x000000AB12345678ULL;  // in EPOCH_LRU's 2^20 ns units: 0xAB123
constexpr std::uint64_t kSetScore = 500;
constexpr std::uint64_t kStepBefore = 9;  // the step counter before the call
constexpr std::uint64_t kCaller = 77;     // the caller's score for the key
constexpr std::uint64_t kMax = ~std::uint64_t{0};

using S = ScoreStrategy;

TableOptions one_bucket(ScoreStrategy strategy) {
  TableOptions o;
  o.dim = 1;
  o.bucket_capacity = 16;
  o.max_capacity = 16;
  o.score_strategy = strategy;
  return o;
}

// The README's first two columns, in its order (which is also the enum's).
TEST(ScoreRules, NamesAndDumpFileCodes) {
  struct Row {
    ScoreStrategy strategy;
    std::string name;
    int code;
  };
  const Row readme[] = {{S::kTimestamp, "TIMESTAMP", 1},   {S::kStep, "STEP", 2},
                        {S::kCustomized, "CUSTOMIZED", 3}, {S::kLfu, "LFU", 4},
                        {S::kEpochLru, "EPOCH_LRU", 5},    {S::kEpochLfu, "EPOCH_LFU", 6},
                        {S::kFrequency, "FREQUENCY", 7}};
  ASSERT_EQ(kScoreStrategies.size(), std::size(readme)) << "the README lists every strategy";
  for (std::size_t i = 0; i < std::size(readme); ++i) {
    EXPECT_EQ(kScoreStrategies[i], readme[i].strategy) << i;
    EXPECT_EQ(to_string(readme[i].strategy), readme[i].name);
    EXPECT_EQ(score_strategy_code(readme[i].strategy), readme[i].code) << readme[i].name;
  }
}

// "call score": the value, and that the clock is read once and the step taken only where the
// README says they are used.
TEST(ScoreRules, CallScore) {
  struct Row {
    ScoreStrategy strategy;
    std::optional<std::uint64_t> call;  // nullopt: "none"
    int clock_reads;
    std::uint64_t step_after;
  };
  const Row readme[] = {
      {S::kTimestamp, kClock, 1, kStepBefore},
      {S::kStep, kStepBefore + 1, 0, kStepBefore + 1},
      {S::kCustomized, kSetScore, 0, kStepBefore},
      {S::kLfu, std::nullopt, 0, kStepBefore},
      {S::kEpochLru, kEpochHigh | 0xAB123, 1, kStepBefore},
      {S::kEpochLfu, std::nullopt, 0, kStepBefore},
      {S::kFrequency, std::nullopt, 0, kStepBefore},
  };
  for (const Row& row : readme) {
    int clock_reads = 0;
    std::uint64_t step = kStepBefore;
    const std::uint64_t call = read_call_score(
        score_rules(row.strategy).call, kEpochHigh, kSetScore,
        [&] {
          ++clock_reads;
          return kClock;
        },
        [&] { return ++step; });
    if (row.call) {
      EXPECT_EQ(call, *row.call) << to_string(row.strategy);
    }
    EXPECT_EQ(clock_reads, row.clock_reads) << to_string(row.strategy);
    EXPECT_EQ(step, row.step_after) << to_string(row.strategy);
  }
}

// "new key", without and with a caller's score, and given the admission filter's estimate of the
// key (6; 0, where the README says "at least 1"). The call score given is arbitrary (1234): the
// README's "the call score" is whatever the call read.
TEST(ScoreRules, NewKey) {
  constexpr std::uint64_t kCall = 1234;
  constexpr int kEstimate = 6;
  struct Row {
    ScoreStrategy strategy;
    std::uint64_t without_caller, with_caller, with_estimate;
  };
  const Row readme[] = {
      {S::kTimestamp, kCall, kCall, kCall},    {S::kStep, kCall, kCall, kCall},
      {S::kCustomized, kCall, kCaller, kCall}, {S::kLfu, 1, 1, 1},
      {S::kEpochLru, kCall, kCall, kCall},     {S::kEpochLfu, kEpochHigh | 1, kEpochHigh | 1, kEpochHigh | 1},
      {S::kFrequency, 1, 1, kEstimate},
  };
  for (const Row& row : readme) {
    const ScoreRules& r = score_rules(row.strategy);
    EXPECT_EQ(new_key_score(r, kCall, kEpochHigh, std::nullopt, 0), row.without_caller) << to_string(row.strategy);
    EXPECT_EQ(new_key_score(r, kCall, kEpochHigh, kCaller, 0), row.with_caller) << to_string(row.strategy);
    EXPECT_EQ(new_key_score(r, kCall, kEpochHigh, std::nullopt, kEstimate), row.with_estimate)
        << to_string(row.strategy);
    EXPECT_EQ(takes_caller_scores(r), row.without_caller != row.with_caller) << to_string(row.strategy);
    EXPECT_EQ(needs_admission_estimate(r), row.without_caller != row.with_estimate) << to_string(row.strategy);
  }
}

// "present key": an old score of this epoch, of an earlier epoch, and saturated ones. `as_new`
// (what the key would get as a new key in this call) is an arbitrary 4321.
TEST(ScoreRules, PresentKey) {
  constexpr std::uint64_t kAsNew = 4321;
  constexpr std::uint64_t kOld = kEpochHigh | 5;                   // this epoch, count 5
  constexpr std::uint64_t kOldEarlier = ((kEpoch - 1) << 32) | 5;  // the epoch before
  constexpr std::uint64_t kOldSaturatedInEpoch = kEpochHigh | 0xFFFFFFFFULL;
  struct Row {
    ScoreStrategy strategy;
    std::uint64_t from_old, from_earlier, from_saturated_in_epoch, from_max;
  };
  const Row readme[] = {
      {S::kTimestamp, kAsNew, kAsNew, kAsNew, kAsNew},
      {S::kStep, kAsNew, kAsNew, kAsNew, kAsNew},
      {S::kCustomized, kAsNew, kAsNew, kAsNew, kAsNew},
      {S::kLfu, kOld + 1, kOldEarlier + 1, kOldSaturatedInEpoch + 1, kMax},
      {S::kEpochLru, kAsNew, kAsNew, kAsNew, kAsNew},
      {S::kEpochLfu, kEpochHigh | 6, kEpochHigh | 1, kOldSaturatedInEpoch, kEpochHigh | 1},
      {S::kFrequency, kOld + 1, kOldEarlier + 1, kOldSaturatedInEpoch + 1, kMax},
  };
  for (const Row& row : readme) {
    const ScoreRules& r = score_rules(row.strategy);
    EXPECT_EQ(present_key_score(r, kOld, kAsNew, kEpochHigh), row.from_old) << to_string(row.strategy);
    EXPECT_EQ(present_key_score(r, kOldEarlier, kAsNew, kEpochHigh), row.from_earlier) << to_string(row.strategy);
    EXPECT_EQ(present_key_score(r, kOldSaturatedInEpoch, kAsNew, kEpochHigh), row.from_saturated_in_epoch)
        << to_string(row.strategy);
    EXPECT_EQ(present_key_score(r, kMax, kAsNew, kEpochHigh), row.from_max) << to_string(row.strategy);
  }
}

// "next incremental dump threshold": get_score() at the dump, the epoch's start, or the largest
// dumped score + 1 (saturating; the dump's own threshold when it wrote nothing).
TEST(ScoreRules, NextDumpThreshold) {
  constexpr std::uint64_t kThreshold = 40, kScoreNow = kEpochHigh | 0x777, kMaxDumped = 900;
  struct Row {
    ScoreStrategy strategy;
    std::uint64_t after_five, after_none, after_max;
  };
  const Row readme[] = {
      {S::kTimestamp, kScoreNow, kScoreNow, kScoreNow},   {S::kStep, kScoreNow, kScoreNow, kScoreNow},
      {S::kCustomized, kMaxDumped + 1, kThreshold, kMax}, {S::kLfu, kMaxDumped + 1, kThreshold, kMax},
      {S::kEpochLru, kEpochHigh, kEpochHigh, kEpochHigh}, {S::kEpochLfu, kEpochHigh, kEpochHigh, kEpochHigh},
      {S::kFrequency, kMaxDumped + 1, kThreshold, kMax},
  };
  for (const Row& row : readme) {
    const ScoreRules& r = score_rules(row.strategy);
    EXPECT_EQ(next_dump_threshold(r, kThreshold, kScoreNow, 5, kMaxDumped), row.after_five) << to_string(row.strategy);
    EXPECT_EQ(next_dump_threshold(r, kThreshold, kScoreNow, 0, 0), row.after_none) << to_string(row.strategy);
    EXPECT_EQ(next_dump_threshold(r, kThreshold, kScoreNow, 5, kMax), row.after_max) << to_string(row.strategy);
  }
}

// "aging": only FREQUENCY's scores change between the calls that set them.
TEST(ScoreRules, Aging) {
  for (const ScoreStrategy strategy : kScoreStrategies)
    EXPECT_EQ(score_rules(strategy).aging, strategy == S::kFrequency ? ScoreAging::kHalveWithBank : ScoreAging::kNever)
        << to_string(strategy);
}

// The same rows through a HostTable (a fixed clock, epoch 3, set_score 500): get_score() before
// any call, the score of key 7 inserted by one call and touched by the next, then touched again
// in epoch 4. FREQUENCY's table has a k-count filter that admits on the first sighting (its new
// key scores the filter's estimate, 1 here; aging is tested in tests/kv/admission_test.cpp).
TEST(ScoreRules, HostTableFollowsThem) {
  constexpr std::uint64_t kNextEpochHigh = (kEpoch + 1) << 32;
  struct Row {
    ScoreStrategy strategy;
    std::uint64_t score_before, inserted, touched, touched_next_epoch;
  };
  const Row readme[] = {
      {S::kTimestamp, kClock, kClock, kClock, kClock},
      {S::kStep, 1, 1, 2, 3},  // the counter starts at 0: the first call takes step 1
      {S::kCustomized, kSetScore, kSetScore, kSetScore, kSetScore},
      {S::kLfu, 1, 1, 2, 3},
      {S::kEpochLru, kEpochHigh | 0xAB123, kEpochHigh | 0xAB123, kEpochHigh | 0xAB123, kNextEpochHigh | 0xAB123},
      {S::kEpochLfu, kEpochHigh | 1, kEpochHigh | 1, kEpochHigh | 2, kNextEpochHigh | 1},
      {S::kFrequency, 1, 1, 2, 3},
  };
  for (const Row& row : readme) {
    TableOptions o = one_bucket(row.strategy);
    o.clock = [] { return kClock; };
    if (needs_admission_estimate(score_rules(row.strategy))) {
      o.admission.kind = AdmissionOptions::Kind::kKCount;
      o.admission.threshold_k = 1;
    }
    HostTable table(o);
    table.set_epoch(kEpoch);
    table.set_score(kSetScore);
    const std::vector<std::uint64_t> key = {7};
    const std::vector<float> value = {1.0f};
    const auto score_of_key = [&] {
      std::vector<float> out(1);
      std::vector<std::uint8_t> found(1);
      std::vector<std::uint64_t> score(1);
      table.find(key, out, found, score);
      EXPECT_EQ(found[0], 1) << to_string(row.strategy);
      return score[0];
    };
    EXPECT_EQ(table.get_score(), row.score_before) << to_string(row.strategy);
    table.insert_or_assign(key, value);
    EXPECT_EQ(score_of_key(), row.inserted) << to_string(row.strategy) << ": inserted";
    table.insert_or_assign(key, value);
    EXPECT_EQ(score_of_key(), row.touched) << to_string(row.strategy) << ": touched";
    table.set_epoch(kEpoch + 1);
    table.insert_or_assign(key, value);
    EXPECT_EQ(score_of_key(), row.touched_next_epoch) << to_string(row.strategy) << ": touched in the next epoch";
  }
  // CUSTOMIZED takes the caller's score for a key, new or present.
  HostTable table(one_bucket(S::kCustomized));
  const std::vector<std::uint64_t> keys = {7, 8};
  const std::vector<float> values = {1.0f, 2.0f};
  table.insert_or_assign(keys, values, std::vector<std::uint64_t>{kCaller, kCaller + 1});
  table.insert_or_assign(std::vector<std::uint64_t>{8}, std::vector<float>{3.0f},
                         std::vector<std::uint64_t>{kCaller + 5});
  std::vector<float> out(2);
  std::vector<std::uint8_t> found(2);
  std::vector<std::uint64_t> scores(2);
  table.find(keys, out, found, scores);
  EXPECT_EQ(scores, (std::vector<std::uint64_t>{kCaller, kCaller + 5}));
}

// EPOCH_LRU across the instant the clock's low 32 bits in ns wrapped (2^32 ns, 4.3 s): a full
// bucket evicts the key touched longest ago, not the one touched just after the wrap; and its
// scores rise with the clock over a minute of ~1 ms steps crossing that instant.
TEST(ScoreRules, EpochLruOrdersTouchesAcrossTheOldWrap) {
  constexpr std::uint64_t kWrap = std::uint64_t{1} << 32;
  std::uint64_t now = kWrap - 100'000'000;  // 0.1 s before
  TableOptions o = one_bucket(S::kEpochLru);
  o.clock = [&now] { return now; };
  HostTable table(o);
  table.set_epoch(kEpoch);
  std::vector<std::uint64_t> keys(16);
  for (std::uint64_t k = 0; k < 16; ++k) {
    keys[k] = 100 + k;
    table.insert_or_assign(std::vector<std::uint64_t>{keys[k]}, std::vector<float>{1.0f});
    now += 12'500'000;  // 12.5 ms: the 16 keys straddle the wrap
  }
  table.insert_or_assign(std::vector<std::uint64_t>{999}, std::vector<float>{2.0f});  // evicts one
  std::vector<float> out(17);
  std::vector<std::uint8_t> found(17);
  keys.push_back(999);
  table.find(keys, out, found);
  EXPECT_EQ(found[0], 0) << "the oldest key stays";
  for (std::size_t k = 1; k < found.size(); ++k) EXPECT_EQ(found[k], 1) << "key " << keys[k] << " was evicted";

  std::uint64_t previous = 0;
  for (std::uint64_t t = kWrap - 30'000'000'000ULL; t < kWrap + 30'000'000'000ULL; t += 1'048'575) {
    const std::uint64_t score = read_call_score(
        CallScoreRule::kEpochClock, kEpochHigh, 0, [t] { return t; }, [] { return 0; });
    ASSERT_GE(score, previous) << "at " << t << " ns";
    ASSERT_EQ(score >> 32, kEpochHigh >> 32);
    previous = score;
  }
}

// A table restored from a checkpoint scores on from the saved table's get_score(): the saved
// table touched 16 keys at an advanced clock, step or epoch; a new table on another clock (behind:
// a node booted later) gets its entries, then continue_scores. Per strategy, the new table's next
// score is the one the README's rule gives after the saved table's last call, and a key touched
// after the restore never scores below the restored ones, so it is not the one evicted.
TEST(ScoreRules, ARestoredTableScoresOnFromTheSavedOne) {
  for (const auto strategy : {S::kTimestamp, S::kStep, S::kEpochLru, S::kCustomized}) {
    SCOPED_TRACE(std::string(score_rules(strategy).name));
    std::uint64_t saved_clock = 5'000'000'000'000ULL, new_clock = 1'000'000'000ULL;
    TableOptions saved_options = one_bucket(strategy), new_options = one_bucket(strategy);
    saved_options.clock = [&saved_clock] { return saved_clock; };
    new_options.clock = [&new_clock] { return new_clock; };
    HostTable saved(saved_options), restored(new_options);
    saved.set_epoch(kEpoch);
    saved.set_score(kSetScore);
    for (std::uint64_t k = 0; k < 16; ++k) {
      saved.insert_or_assign(std::vector<std::uint64_t>{100 + k}, std::vector<float>{1.0f});
      saved_clock += 2'000'000;  // 2 ms: apart in EPOCH_LRU's units too
    }
    std::vector<std::uint64_t> keys, values_scores;
    std::vector<float> values;
    saved.export_batch(0, 16, keys, values, values_scores);
    restored.restore(keys, values, values_scores);
    const std::uint64_t score_now = saved.get_score();
    restored.continue_scores(score_now);
    EXPECT_EQ(restored.get_score(), score_now) << "the next call's score continues";
    // One more key into the full bucket: under the clocks and the step it is the newest, and the
    // oldest restored key (100) goes; CUSTOMIZED gives it the set_score value, as before.
    new_clock += 3'000'000;
    restored.insert_or_assign(std::vector<std::uint64_t>{999}, std::vector<float>{2.0f});
    std::vector<std::uint8_t> found(2);
    std::vector<float> out(2);
    restored.find(std::vector<std::uint64_t>{100, 999}, out, found);
    if (strategy == S::kCustomized) continue;  // equal scores: ties go by key, 100 < 999
    EXPECT_EQ(found[0], 0) << "the oldest restored key was kept";
    EXPECT_EQ(found[1], 1) << "the key touched after the restore was evicted";
  }
}

}  // namespace
}  // namespace embscale::kv
