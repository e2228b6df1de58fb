#include "sim/score_retention_oracle.hpp"

#include "core/error.hpp"

namespace embscale::sim {
namespace {

constexpr std::size_t kPrefetchAhead = 16;  // as in lru_oracle.cpp

}  // namespace

ScoreRetentionOracle::ScoreRetentionOracle(std::int64_t capacity, kv::ScoreStrategy strategy, ScoreMemory memory)
    : rules_(&kv::score_rules(strategy)), memory_(memory), capacity_(capacity) {
  EMBSCALE_EXPECTS(capacity >= 1 && capacity <= (std::int64_t{1} << 31),
                   "ScoreRetentionOracle: capacity must be in [1, 2^31] keys");
  heap_.reserve(static_cast<std::size_t>(capacity));
}

void ScoreRetentionOracle::sift_up(std::size_t at) noexcept {
  const Entry e = heap_[at];
  while (at > 0) {
    const std::size_t parent = (at - 1) / 2;
    if (!lower(e, heap_[parent])) break;
    place(at, heap_[parent]);
    at = parent;
  }
  place(at, e);
}

void ScoreRetentionOracle::sift_down(std::size_t at) noexcept {
  const Entry e = heap_[at];
  const std::size_t n = heap_.size();
  for (;;) {
    std::size_t child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && lower(heap_[child + 1], heap_[child])) ++child;
    if (!lower(heap_[child], e)) break;
    place(at, heap_[child]);
    at = child;
  }
  place(at, e);
}

std::int64_t ScoreRetentionOracle::access(std::span<const std::int64_t> call) {
  const std::uint64_t call_score = kv::read_call_score(
      rules_->call, epoch_high_, custom_score_, [&] { return calls_ + 1; }, [&] { return calls_ + 1; });
  ++calls_;
  const std::uint64_t fresh = kv::new_key_score(*rules_, call_score, epoch_high_, std::nullopt);
  std::int64_t hits = 0;
  for (std::size_t i = 0; i < call.size(); ++i) {
    if (i + kPrefetchAhead < call.size()) index_.prefetch(call[i + kPrefetchAhead]);
    bool inserted = false;
    const std::uint32_t id = index_.find_or_insert(call[i], inserted);
    if (inserted) {
      position_.push_back(kNone);
      if (memory_ == ScoreMemory::kEveryKey) remembered_.push_back(0);
    }
    const std::uint32_t at = position_[id];
    if (at != kNone) {
      ++hits;
      Entry& e = heap_[at];
      const std::uint64_t old = e.score;
      e.score = kv::present_key_score(*rules_, old, fresh, epoch_high_);
      if (e.score < old) {
        sift_up(at);
      } else {
        sift_down(at);
      }
      continue;
    }
    // A returning key under kEveryKey scores as if it had stayed (as a hit on its old score).
    const bool returns = memory_ == ScoreMemory::kEveryKey && !inserted;
    const std::uint64_t score = returns ? kv::present_key_score(*rules_, remembered_[id], fresh, epoch_high_) : fresh;
    const Entry entry{score, static_cast<std::uint64_t>(call[i]), id};
    if (size() < capacity_) {
      heap_.push_back(entry);
      sift_up(heap_.size() - 1);
    } else if (score >= heap_[0].score) {  // replaces the lowest (score, key); ties: the newcomer
      position_[heap_[0].id] = kNone;
      if (memory_ == ScoreMemory::kEveryKey) remembered_[heap_[0].id] = heap_[0].score;
      place(0, entry);
      sift_down(0);
    } else {
      ++refused_;
      if (memory_ == ScoreMemory::kEveryKey) remembered_[id] = score;
    }
  }
  return hits;
}

bool ScoreRetentionOracle::contains(std::int64_t key) const {
  const auto id = index_.find(key);
  return id && position_[*id] != kNone;
}

std::optional<std::uint64_t> ScoreRetentionOracle::score(std::int64_t key) const {
  const auto id = index_.find(key);
  if (!id || position_[*id] == kNone) return std::nullopt;
  return heap_[position_[*id]].score;
}

void ScoreRetentionOracle::for_each_key(const std::function<void(std::int64_t)>& f) const {
  for (const Entry& e : heap_) f(static_cast<std::int64_t>(e.key));
}

}  // namespace embscale::sim
