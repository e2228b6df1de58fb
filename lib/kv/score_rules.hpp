// Every score strategy's rules, in one place: a row per strategy (kScoreRules) and, per kind of
// rule, the one function that applies it.
//
// A row gives the strategy's name (options, messages), its code in dump files
// (kv/table_file_format.hpp) and the rule it follows for each question:
//   call score      what a score-setting call reads once, before its keys (so under TIMESTAMP,
//                   STEP and EPOCH_LRU one call gives all the keys it sets one score);
//   new key         the score of a key the call inserts;
//   present key     the score of a key the call finds in the table (a hit);
//   aging           what happens to scores between calls' touches (only FREQUENCY's change);
//   next dump       where an incremental dump's next threshold lies (kv/table_file.hpp).
// The rest is the same under every strategy: find, contains and export never change a score,
// restore puts entries back with their own scores, and a new key in a full bucket replaces the
// lowest score when its own is not lower (kv/host_table.hpp). lib/kv/README.md ("Score
// strategies") states the table in words; tests/kv/score_rules_test.cpp holds the code to it.
//
// HostTable and table_file.cpp never switch over ScoreStrategy: they take the strategy's row and
// call the functions below, which switch over its rule kinds without a default, so a new kind
// of rule is a -Wswitch warning (-Wall) wherever it is not handled, and a new strategy is one row
// (the static_assert below refuses a table that misses one).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

#include "kv/table_options.hpp"

namespace embscale::kv {

inline constexpr std::uint64_t kScoreLow32 = 0xFFFFFFFFULL;  // an epoch score's own part
// EPOCH_LRU's own part is the clock in units of 2^20 ns (about 1.05 ms), as HierarchicalKV's
// (device_clock >> 20): 32 bits of it wrap every 2^52 ns (52.1 days of the clock) instead of the
// 4.3 s that the clock's low 32 bits in ns did, which ordered a long epoch's touches wrongly.
inline constexpr int kEpochClockShift = 20;

// What a score-setting call reads once, before its keys.
enum class CallScoreRule {
  kClock,       // the clock (ns)
  kNextStep,    // the step counter, advanced by one: each call takes the next step
  kEpochClock,  // epoch << 32 | the low 32 bits of the clock >> kEpochClockShift
  kSetScore,    // the value of the last HostTable::set_score
  kNothing,     // nothing: the strategy counts occurrences
};

// The score of a key the call inserts.
enum class NewKeyRule {
  kCallScore,          // the call's score
  kCallerOrCallScore,  // the caller's score for the key; the call's score when the call gives none
  kOne,                // 1: its first occurrence
  kEpochOne,           // epoch << 32 | 1: its first occurrence in the epoch
  kEstimate,           // the admission filter's estimate of its sightings, this one included
                       // (at least 1): its frequency so far, though it was not stored. Needs a
                       // filter (check_options refuses the strategy without one)
};

// The score of a key the call finds in the table, whose score was `old`.
enum class PresentKeyRule {
  kAsNew,         // what a new key would get: `old` is forgotten
  kCount,         // old + 1, saturating at 2^64 - 1
  kCountInEpoch,  // old + 1 when old is of the current epoch (its low 32 bits saturating at
                  // 2^32 - 1), else epoch << 32 | 1: the count restarts each epoch
};

// How scores age apart from the calls that set them.
enum class ScoreAging {
  kNever,          // a score changes only when a call sets it
  kHalveWithBank,  // when a sighting ages its bucket's bank of the admission filter (every
                   // aging_factor x bucket_capacity sightings of the bucket: kv/admission.hpp),
                   // every score of the bucket is halved (s >>= 1), so that scores and the
                   // filter's estimates, which the newcomers' scores come from, stay one scale
};

// An incremental dump's next threshold: after the dump, which scores count as changed.
enum class NextDumpRule {
  kScoreNow,        // get_score() under the dump's lock: every later call's scores are >= it
  kEpochStart,      // the current epoch << 32: the low 32 bits are not monotonic
  kAfterMaxDumped,  // the largest dumped score + 1 (saturating), or the threshold when nothing
                    // was dumped: the scores are the caller's or counts, not a clock
};

struct ScoreRules {
  ScoreStrategy strategy;
  std::string_view name;   // in options and messages
  std::uint8_t file_code;  // the dump header's score_strategy byte
  CallScoreRule call;
  NewKeyRule new_key;
  PresentKeyRule present_key;
  ScoreAging aging;
  NextDumpRule next_dump;
};

// Indexed by ScoreStrategy (row i is the strategy of value i).
inline constexpr ScoreRules kScoreRules[] = {
    // {strategy, name, code, call score, new key, present key, aging, next dump}
    {ScoreStrategy::kTimestamp, "TIMESTAMP", 1, CallScoreRule::kClock, NewKeyRule::kCallScore, PresentKeyRule::kAsNew,
     ScoreAging::kNever, NextDumpRule::kScoreNow},
    {ScoreStrategy::kStep, "STEP", 2, CallScoreRule::kNextStep, NewKeyRule::kCallScore, PresentKeyRule::kAsNew,
     ScoreAging::kNever, NextDumpRule::kScoreNow},
    {ScoreStrategy::kCustomized, "CUSTOMIZED", 3, CallScoreRule::kSetScore, NewKeyRule::kCallerOrCallScore,
     PresentKeyRule::kAsNew, ScoreAging::kNever, NextDumpRule::kAfterMaxDumped},
    {ScoreStrategy::kLfu, "LFU", 4, CallScoreRule::kNothing, NewKeyRule::kOne, PresentKeyRule::kCount,
     ScoreAging::kNever, NextDumpRule::kAfterMaxDumped},
    {ScoreStrategy::kEpochLru, "EPOCH_LRU", 5, CallScoreRule::kEpochClock, NewKeyRule::kCallScore,
     PresentKeyRule::kAsNew, ScoreAging::kNever, NextDumpRule::kEpochStart},
    {ScoreStrategy::kEpochLfu, "EPOCH_LFU", 6, CallScoreRule::kNothing, NewKeyRule::kEpochOne,
     PresentKeyRule::kCountInEpoch, ScoreAging::kNever, NextDumpRule::kEpochStart},
    {ScoreStrategy::kFrequency, "FREQUENCY", 7, CallScoreRule::kNothing, NewKeyRule::kEstimate, PresentKeyRule::kCount,
     ScoreAging::kHalveWithBank, NextDumpRule::kAfterMaxDumped},
};

namespace detail {
// True for the values of ScoreStrategy's enumerators. The switch lists each of them with no
// default: an enumerator added to ScoreStrategy and not here is a -Wswitch warning, and once it
// is listed, the static_assert below fails until kScoreRules has its row.
constexpr bool is_score_strategy(int value) noexcept {
  switch (static_cast<ScoreStrategy>(value)) {
    case ScoreStrategy::kTimestamp:
    case ScoreStrategy::kStep:
    case ScoreStrategy::kCustomized:
    case ScoreStrategy::kLfu:
    case ScoreStrategy::kEpochLru:
    case ScoreStrategy::kEpochLfu:
    case ScoreStrategy::kFrequency: return true;
  }
  return false;
}

constexpr bool rows_cover_every_strategy_in_order() noexcept {
  int i = 0;
  for (const ScoreRules& row : kScoreRules) {
    if (static_cast<int>(row.strategy) != i || !is_score_strategy(i)) return false;
    ++i;
  }
  return !is_score_strategy(i);
}
}  // namespace detail
static_assert(detail::rows_cover_every_strategy_in_order(),
              "kScoreRules needs one row per ScoreStrategy, in the enum's order (it is indexed by the enum)");

constexpr const ScoreRules& score_rules(ScoreStrategy s) noexcept { return kScoreRules[static_cast<std::size_t>(s)]; }

// Every strategy, in enum order.
inline constexpr auto kScoreStrategies = [] {
  std::array<ScoreStrategy, std::size(kScoreRules)> all{};
  for (std::size_t i = 0; i < all.size(); ++i) all[i] = kScoreRules[i].strategy;
  return all;
}();

// Whether calls pass scores of their own per key (the other strategies ignore them).
constexpr bool takes_caller_scores(const ScoreRules& r) noexcept { return r.new_key == NewKeyRule::kCallerOrCallScore; }
// Whether a new key's score comes from the admission filter (the strategy needs one).
constexpr bool needs_admission_estimate(const ScoreRules& r) noexcept { return r.new_key == NewKeyRule::kEstimate; }

// The call's score. `epoch_high` is the epoch << 32; `set_score` is HostTable::set_score's
// value. clock() is read, and next_step() (STEP's counter: advance, or peek for get_score) is
// called, only by the rules that use them: one clock read and one step per call.
template <typename Clock, typename NextStep>
std::uint64_t read_call_score(CallScoreRule rule, std::uint64_t epoch_high, std::uint64_t set_score, Clock&& clock,
                              NextStep&& next_step) {
  switch (rule) {
    case CallScoreRule::kClock: return clock();
    case CallScoreRule::kNextStep: return next_step();
    case CallScoreRule::kEpochClock: return epoch_high | ((clock() >> kEpochClockShift) & kScoreLow32);
    case CallScoreRule::kSetScore: return set_score;
    case CallScoreRule::kNothing: return 0;
  }
  return 0;  // not a rule (a value cast from outside the enum)
}

// What a table restored from a checkpoint sets so that its scores continue from the saved
// table's: `score_now` is the saved table's get_score(), `clock_now` the new table's clock (ns).
// STEP: its counter continues after the saved step. TIMESTAMP: the clock is read with an offset
// that keeps it at or above the saved clock (a run resumed on a node whose steady clock is
// behind: Slurm's requeue), so restored entries never look newer than later touches. EPOCH_LRU:
// the saved epoch, and the clock's low part continuing from the saved one. CUSTOMIZED: the saved
// set_score value. The counting strategies: the saved epoch (EPOCH_LFU's; 0 for the others).
struct ScoreContinuation {
  std::optional<std::uint64_t> step;  // STEP's counter (get_score() is step + 1)
  std::uint64_t clock_offset = 0;     // added to every clock read (mod 2^64)
  std::optional<std::uint32_t> epoch;
  std::optional<std::uint64_t> set_score;
};
constexpr ScoreContinuation continue_scores(const ScoreRules& r, std::uint64_t score_now,
                                            std::uint64_t clock_now) noexcept {
  ScoreContinuation c;
  constexpr std::uint64_t kClockLowMask = (std::uint64_t{1} << (32 + kEpochClockShift)) - 1;
  switch (r.call) {
    case CallScoreRule::kClock: c.clock_offset = score_now > clock_now ? score_now - clock_now : 0; break;
    case CallScoreRule::kNextStep: c.step = score_now == 0 ? 0 : score_now - 1; break;
    case CallScoreRule::kEpochClock:
      c.epoch = static_cast<std::uint32_t>(score_now >> 32);
      // (clock_now + offset) >> kEpochClockShift has the saved low 32 bits now, and counts on.
      c.clock_offset = (((score_now & kScoreLow32) << kEpochClockShift) - clock_now) & kClockLowMask;
      break;
    case CallScoreRule::kSetScore: c.set_score = score_now; break;
    case CallScoreRule::kNothing: c.epoch = static_cast<std::uint32_t>(score_now >> 32); break;
  }
  return c;
}

// The score of a key the call inserts; `caller`: the call's score for the key, if it gives one;
// `estimate`: the admission filter's estimate of the key, its sighting recorded (kEstimate only).
constexpr std::uint64_t new_key_score(const ScoreRules& r, std::uint64_t call_score, std::uint64_t epoch_high,
                                      std::optional<std::uint64_t> caller, int estimate = 0) noexcept {
  switch (r.new_key) {
    case NewKeyRule::kCallScore: return call_score;
    case NewKeyRule::kCallerOrCallScore: return caller ? *caller : call_score;
    case NewKeyRule::kOne: return 1;
    case NewKeyRule::kEpochOne: return epoch_high | 1;
    case NewKeyRule::kEstimate: return estimate > 1 ? static_cast<std::uint64_t>(estimate) : 1;
  }
  return call_score;  // not a rule
}

// The score of a key the call finds with score `old`; `as_new`: its new_key_score in this call.
constexpr std::uint64_t present_key_score(const ScoreRules& r, std::uint64_t old, std::uint64_t as_new,
                                          std::uint64_t epoch_high) noexcept {
  switch (r.present_key) {
    case PresentKeyRule::kAsNew: return as_new;
    case PresentKeyRule::kCount: return old == ~std::uint64_t{0} ? old : old + 1;
    case PresentKeyRule::kCountInEpoch:
      if ((old & ~kScoreLow32) != epoch_high) return epoch_high | 1;
      return (old & kScoreLow32) == kScoreLow32 ? old : old + 1;
  }
  return as_new;  // not a rule
}

// An incremental dump's next threshold, from this dump's `threshold`, get_score() under its lock
// (`score_now`), and the count and largest score of the entries it wrote.
constexpr std::uint64_t next_dump_threshold(const ScoreRules& r, std::uint64_t threshold, std::uint64_t score_now,
                                            std::int64_t dumped, std::uint64_t max_dumped) noexcept {
  switch (r.next_dump) {
    case NextDumpRule::kScoreNow: return score_now;
    case NextDumpRule::kEpochStart: return score_now & ~kScoreLow32;
    case NextDumpRule::kAfterMaxDumped:
      if (dumped == 0) return threshold;
      return max_dumped == ~std::uint64_t{0} ? max_dumped : max_dumped + 1;
  }
  return threshold;  // not a rule
}

}  // namespace embscale::kv
