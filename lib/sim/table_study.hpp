// TableStudy: one measured table on one rank (eviction_study.hpp). It copies the table's read
// calls as they happen (AccessObserver: inside the timed step, so nothing else), records each
// step's figures after it, and feeds the calls in order to the oracles only at sample steps (and
// at the end), then compares what the table holds with what the oracles say it should. Feeding
// in bulk keeps the oracles' memory traffic away from the steps in between: fed after every
// step, their arrays evicted the table's buckets from the caches and the next step's lookup
// measured 10-15 % slower (README.md "Eviction accuracy"); now only the step after a sample can
// see that. The buffer holds sample_every steps' keys (8 bytes a key).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "config/config.hpp"
#include "kv/access_observer.hpp"
#include "sim/belady_oracle.hpp"
#include "sim/eviction_study.hpp"
#include "sim/lfu_oracle.hpp"
#include "sim/lru_oracle.hpp"
#include "sim/score_retention_oracle.hpp"

namespace embscale::sim {

// The oracles in the order of config::kEvictionOracles (columns follow it).
enum class Oracle { kLru, kLfu, kScoreRetention, kUnbucketed, kBelady };
inline constexpr std::size_t kOracleCount = 5;

// This rank's figures of one step.
struct StepFigures {
  kv::CallOutcome table;                                 // summed over the step's calls
  std::int64_t accesses = 0;                             // keys the table was asked for
  std::array<std::int64_t, kOracleCount> oracle_hits{};  // by Oracle; Belady's filled by finish
};

// This rank's recall sample at one step.
struct RecallSample {
  std::int64_t step = 0;      // index of the step (0: the first, warm-up included)
  std::int64_t retained = 0;  // keys held by both the table and score_retention
  std::int64_t ideal = 0;     // keys score_retention holds
  std::int64_t hot_held = 0;  // of the hottest keys so far, those the table holds
  std::int64_t hot = 0;       // how many hottest keys (hot_key_share of the keys seen, at least 1)
};

class TableStudy final : public kv::AccessObserver {
 public:
  TableStudy(MeasuredTable table, const config::EvictionStudy& options);

  void on_call(std::span<const std::int64_t> keys, const kv::CallOutcome& outcome) override;
  // The table's epoch and set_score value from the next call on: the score oracles get them
  // before that call, as the table did.
  void on_score_clock(std::uint32_t epoch, std::uint64_t score) override { clock_ = {epoch, score}; }
  // After a step: records its figures; `sample`: the oracles take every call since the last
  // sample and the recalls are measured now.
  void end_step(bool sample);
  // Belady over the whole recorded stream, into steps()[*].oracle_hits. False when the stream
  // outgrew belady_max_accesses (then Belady's hits stay 0 and must not be reported).
  bool run_belady();

  bool has(Oracle oracle) const noexcept { return enabled_[static_cast<std::size_t>(oracle)]; }
  const MeasuredTable& table() const noexcept { return table_; }
  const std::vector<StepFigures>& steps() const noexcept { return steps_; }
  const std::vector<RecallSample>& samples() const noexcept { return samples_; }

 private:
  RecallSample sample_recall() const;
  void feed_pending();  // the buffered calls to the oracles, their hits into their steps

  MeasuredTable table_;
  double hot_key_share_;
  std::int64_t belady_limit_;
  std::array<bool, kOracleCount> enabled_{};
  std::optional<LruOracle> lru_;
  std::optional<LfuOracle> lfu_;
  std::optional<ScoreRetentionOracle> score_;       // ScoreMemory::kEveryKey: the ideal
  std::optional<ScoreRetentionOracle> unbucketed_;  // ScoreMemory::kResidents: no buckets
  std::optional<BeladyOracle> belady_;
  bool belady_complete_ = true;
  std::vector<std::int64_t> calls_per_step_;  // Belady's per-call hits back to steps
  // The calls not yet fed: their keys back to back, each call's end, each step's end (in keys_);
  // the step being recorded's outcome; steps fed so far; calls of the steps before this one.
  std::vector<std::int64_t> keys_;
  std::vector<std::size_t> call_ends_;
  struct ScoreClock {
    std::uint32_t epoch = 0;
    std::uint64_t score = 0;
  };
  ScoreClock clock_;                     // the table's now
  std::vector<ScoreClock> call_clocks_;  // each pending call's
  std::vector<std::size_t> step_ends_;
  std::size_t fed_steps_ = 0;
  std::size_t pending_calls_ = 0;
  kv::CallOutcome outcome_;
  std::vector<StepFigures> steps_;
  std::vector<RecallSample> samples_;
};

}  // namespace embscale::sim
