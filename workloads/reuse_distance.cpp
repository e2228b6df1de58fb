#include "workloads/reuse_distance.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"
#include "workloads/share_rank.hpp"

namespace embscale::workloads {
namespace {

// The smallest tree; below it compactions would be frequent and pointless.
constexpr std::uint32_t kMinTimes = 1024;

}  // namespace

std::int64_t ReuseDistanceCounter::marks_up_to(std::uint32_t time) const {
  const std::size_t word = time / 64;
  // Whole words before `word` from the tree (node i covers words [i - lowbit(i), i)), then the
  // bits of `word` up to and including `time`.
  std::int64_t sum = std::popcount(bits_[word] & (~std::uint64_t{0} >> (63 - time % 64)));
  for (std::size_t i = word; i > 0; i &= i - 1) sum += tree_[i];
  return sum;
}

void ReuseDistanceCounter::set_mark(std::uint32_t time, bool on) {
  const std::size_t word = time / 64;
  bits_[word] ^= std::uint64_t{1} << (time % 64);  // the caller flips a bit that is !on
  // +1 or -1 (as 2^32 - 1): unsigned wrap-around is the subtraction.
  const std::uint32_t delta = on ? 1u : ~std::uint32_t{0};
  for (std::size_t i = word + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
}

std::int64_t ReuseDistanceCounter::access(std::uint32_t id) {
  EMBSCALE_EXPECTS(id < kMaxIds, "reuse distance ids must be below 2^31 - 2");
  if (id >= last_.size()) last_.resize(std::max<std::size_t>(std::size_t{id} + 1, 2 * last_.size()), kNone);
  if (now_ >= owner_.size()) compact();
  ++accesses_;
  const std::uint32_t previous = last_[id];
  std::int64_t distance = kCold;
  if (previous == kNone) {
    ++live_;
    at_distance_.push_back(0);  // distances of later reuses stay below live_
  } else {
    // Marks after `previous`: the distinct keys accessed since, x's own mark being at `previous`.
    distance = live_ - marks_up_to(previous);
    ++at_distance_[static_cast<std::size_t>(distance)];
    set_mark(previous, false);
    owner_[previous] = kNone;
  }
  set_mark(now_, true);
  owner_[now_] = id;
  last_[id] = now_;
  ++now_;
  return distance;
}

std::int64_t ReuseDistanceCounter::stack_depth(std::uint32_t id) const {
  if (id >= last_.size() || last_[id] == kNone) return kCold;
  return live_ - marks_up_to(last_[id]);  // as in access(): the marks after id's own
}

void ReuseDistanceCounter::compact() {
  // Renumber the marked times 0..live_-1 in order: distances depend only on the order of marks.
  std::uint32_t next = 0;
  for (std::uint32_t t = 0; t < now_; ++t) {
    const std::uint32_t id = owner_[t];
    if (id == kNone) continue;
    owner_[next] = id;
    last_[id] = next;
    ++next;
  }
  // At least twice the live marks (plus the one the coming access may add), so that the next
  // compaction is at least live_ accesses away; never shrinks; whole words.
  const std::size_t times = (std::max({std::size_t{kMinTimes}, owner_.size(), 2 * (std::size_t{live_} + 1)}) + 63) / 64 * 64;
  owner_.resize(times);
  std::fill(owner_.begin() + next, owner_.end(), kNone);
  const std::size_t words = times / 64;
  bits_.assign(words, 0);
  for (std::size_t w = 0; w < next / 64; ++w) bits_[w] = ~std::uint64_t{0};
  if (next % 64 != 0) bits_[next / 64] = (std::uint64_t{1} << (next % 64)) - 1;
  // Linear Fenwick build over the words' counts: each node passes its sum to its parent.
  tree_.assign(words + 1, 0);
  for (std::size_t i = 1; i <= words; ++i) tree_[i] += static_cast<std::uint32_t>(std::popcount(bits_[i - 1]));
  for (std::size_t i = 1; i <= words; ++i) {
    const std::size_t parent = i + (i & (~i + 1));
    if (parent <= words) tree_[parent] += tree_[i];
  }
  now_ = next;
}

double ReuseDistanceCounter::lru_hit_ratio(std::int64_t capacity) const {
  if (accesses_ == 0) return 0.0;
  const auto end = static_cast<std::size_t>(std::clamp<std::int64_t>(capacity, 0, static_cast<std::int64_t>(at_distance_.size())));
  std::int64_t hits = 0;
  for (std::size_t d = 0; d < end; ++d) hits += at_distance_[d];
  return static_cast<double>(hits) / static_cast<double>(accesses_);
}

ReuseDistanceStats ReuseDistanceCounter::summarize() const {
  ReuseDistanceStats stats;
  stats.accesses = accesses_;
  stats.cold = live_;
  stats.distinct = live_;
  const std::int64_t reuses = accesses_ - live_;
  if (reuses > 0) {
    // Quantile ranks ascending; one walk over the distances resolves all three.
    const std::int64_t ranks[] = {ceil_per_mille(reuses, 500), ceil_per_mille(reuses, 900), ceil_per_mille(reuses, 990)};
    std::int64_t* quantiles[] = {&stats.median, &stats.p90, &stats.p99};
    std::size_t next_quantile = 0;
    std::int64_t seen = 0;
    for (std::size_t d = 0; d < at_distance_.size(); ++d) {
      if (at_distance_[d] == 0) continue;
      seen += at_distance_[d];
      const auto bucket = static_cast<std::size_t>(std::bit_width(d));  // 0 for d = 0, i for [2^(i-1), 2^i)
      if (bucket >= stats.histogram.size()) stats.histogram.resize(bucket + 1, 0);
      stats.histogram[bucket] += at_distance_[d];
      while (next_quantile < 3 && seen >= ranks[next_quantile]) *quantiles[next_quantile++] = static_cast<std::int64_t>(d);
    }
  }
  if (accesses_ > 0) {
    // hit(C) for C = 2^k: the reuses at distances < C, accumulated as C doubles.
    std::int64_t hits = 0;
    std::size_t d = 0;
    for (std::int64_t capacity = 1;; capacity *= 2) {
      for (; d < at_distance_.size() && static_cast<std::int64_t>(d) < capacity; ++d) hits += at_distance_[d];
      stats.lru_curve.push_back({capacity, static_cast<double>(hits) / static_cast<double>(accesses_)});
      if (capacity >= static_cast<std::int64_t>(live_)) break;
    }
  }
  return stats;
}

}  // namespace embscale::workloads
