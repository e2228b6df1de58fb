#include "sim/table_study.hpp"

#include <algorithm>
#include <cmath>

namespace embscale::sim {

TableStudy::TableStudy(MeasuredTable table, const config::EvictionStudy& options)
    : table_(std::move(table)), hot_key_share_(options.hot_key_share), belady_limit_(options.belady_max_accesses) {
  for (std::size_t o = 0; o < kOracleCount; ++o)
    enabled_[o] =
        std::find(options.oracles.begin(), options.oracles.end(), config::kEvictionOracles[o]) != options.oracles.end();
  if (has(Oracle::kLru)) lru_.emplace(table_.capacity);
  if (has(Oracle::kLfu)) lfu_.emplace(table_.capacity);
  if (has(Oracle::kScoreRetention)) score_.emplace(table_.capacity, table_.strategy, ScoreMemory::kEveryKey);
  if (has(Oracle::kUnbucketed)) unbucketed_.emplace(table_.capacity, table_.strategy, ScoreMemory::kResidents);
  if (has(Oracle::kBelady)) belady_.emplace();
}

void TableStudy::on_call(std::span<const std::int64_t> keys, const kv::CallOutcome& outcome) {
  keys_.insert(keys_.end(), keys.begin(), keys.end());
  call_ends_.push_back(keys_.size());
  call_clocks_.push_back(clock_);
  outcome_.hits += outcome.hits;
  outcome_.inserts += outcome.inserts;
  outcome_.evictions += outcome.evictions;
  outcome_.refused += outcome.refused;
  outcome_.not_admitted += outcome.not_admitted;
}

void TableStudy::end_step(bool sample) {
  StepFigures step;
  step.table = outcome_;
  step.accesses = static_cast<std::int64_t>(keys_.size() - (step_ends_.empty() ? 0 : step_ends_.back()));
  steps_.push_back(step);
  step_ends_.push_back(keys_.size());
  calls_per_step_.push_back(static_cast<std::int64_t>(call_ends_.size() - pending_calls_));
  pending_calls_ = call_ends_.size();
  outcome_ = {};
  if (!sample) return;
  feed_pending();
  RecallSample s = sample_recall();
  s.step = static_cast<std::int64_t>(steps_.size()) - 1;
  samples_.push_back(s);
}

void TableStudy::feed_pending() {
  std::size_t begin = 0, call = 0;
  for (std::size_t p = 0; p < step_ends_.size(); ++p) {
    StepFigures& step = steps_[fed_steps_ + p];
    for (std::int64_t c = 0; c < calls_per_step_[fed_steps_ + p]; ++c, ++call) {
      const std::size_t end = call_ends_[call];
      const std::span<const std::int64_t> keys(keys_.data() + begin, end - begin);
      for (auto* oracle : {score_ ? &*score_ : nullptr, unbucketed_ ? &*unbucketed_ : nullptr})
        if (oracle) {
          oracle->set_epoch(call_clocks_[call].epoch);
          oracle->set_score(call_clocks_[call].score);
        }
      if (lru_) step.oracle_hits[static_cast<std::size_t>(Oracle::kLru)] += lru_->access(keys);
      if (lfu_) step.oracle_hits[static_cast<std::size_t>(Oracle::kLfu)] += lfu_->access(keys);
      if (score_) step.oracle_hits[static_cast<std::size_t>(Oracle::kScoreRetention)] += score_->access(keys);
      if (unbucketed_) step.oracle_hits[static_cast<std::size_t>(Oracle::kUnbucketed)] += unbucketed_->access(keys);
      if (belady_ && belady_complete_) {
        if (belady_->accesses() + static_cast<std::int64_t>(keys.size()) > belady_limit_) {
          belady_complete_ = false;
          belady_.reset();  // its memory back: the rest of the run needs none of it
        } else {
          belady_->append(keys);
        }
      }
      begin = end;
    }
  }
  fed_steps_ += step_ends_.size();
  keys_.clear();
  call_ends_.clear();
  call_clocks_.clear();
  step_ends_.clear();
  pending_calls_ = 0;
}

RecallSample TableStudy::sample_recall() const {
  RecallSample s;
  std::vector<std::int64_t> held;
  table_.resident([&](std::int64_t key) { held.push_back(key); });
  if (score_) {
    s.ideal = score_->size();
    for (const std::int64_t key : held) s.retained += score_->contains(key) ? 1 : 0;
  }
  if (lfu_ && lfu_->distinct() > 0) {
    s.hot = std::max<std::int64_t>(1, std::llround(hot_key_share_ * static_cast<double>(lfu_->distinct())));
    std::sort(held.begin(), held.end());
    for (const std::int64_t key : lfu_->top_keys(s.hot))
      s.hot_held += std::binary_search(held.begin(), held.end(), key) ? 1 : 0;
  }
  return s;
}

bool TableStudy::run_belady() {
  feed_pending();
  if (!belady_ || !belady_complete_) return false;
  const std::vector<std::int64_t> per_call = belady_->hits_per_call(table_.capacity);
  std::size_t call = 0;
  for (std::size_t s = 0; s < steps_.size(); ++s)
    for (std::int64_t c = 0; c < calls_per_step_[s]; ++c)
      steps_[s].oracle_hits[static_cast<std::size_t>(Oracle::kBelady)] += per_call[call++];
  return true;
}

}  // namespace embscale::sim
