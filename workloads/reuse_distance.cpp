#include "workloads/reuse_distance.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"
#include "workloads/share_rank.hpp"

namespace embscale::workloads {
namespace {

// The smallest tree; below it compactions would be frequent and pointless.
constexpr std::uint32_t kMinTimes = 1024;

// Set bits of a word. The build targets baseline x86-64, where std::popcount is a call into
// libgcc (4 % of an LRU oracle's time); this is a dozen inline operations. With POPCNT
// (-march=native) it is the instruction.
inline int popcount64(std::uint64_t x) noexcept {
#if defined(__POPCNT__)
  return std::popcount(x);
#else
  x -= (x >> 1) & 0x5555555555555555ULL;
  x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
  x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
  return static_cast<int>((x * 0x0101010101010101ULL) >> 56);
#endif
}

}  // namespace

std::int64_t ReuseDistanceCounter::marks_up_to(std::uint32_t time) const {
  const std::size_t word = time / 64;
  // Whole words before `word` from the tree (node i covers words [i - lowbit(i), i); every word
  // before `word` is closed, as word <= now's), then the bits of `word` up to and including `time`.
  std::int64_t sum = popcount64(bits_[word] & (~std::uint64_t{0} >> (63 - time % 64)));
  for (std::size_t i = word; i > 0; i &= i - 1) sum += tree_[i];
  return sum;
}

void ReuseDistanceCounter::add_to_tree(std::size_t word, std::uint32_t delta) {
  for (std::size_t i = word + 1; i < tree_.size(); i += i & (~i + 1)) tree_[i] += delta;
}

void ReuseDistanceCounter::clear_mark(std::uint32_t time) {
  const std::size_t word = time / 64;
  bits_[word] ^= std::uint64_t{1} << (time % 64);            // the caller clears a set bit
  if (word < closed_) add_to_tree(word, ~std::uint32_t{0});  // -1: unsigned wrap-around
}

void ReuseDistanceCounter::set_mark_now() {
  const std::size_t word = now_ / 64;
  // The words before now's are closed: the tree takes a word's count once, when it closes, so
  // the newest mark costs a bit flip rather than a tree walk.
  if (word > closed_) {
    add_to_tree(closed_, static_cast<std::uint32_t>(popcount64(bits_[closed_])));
    ++closed_;
  }
  bits_[word] |= std::uint64_t{1} << (now_ % 64);
}

void ReuseDistanceCounter::make_room(std::uint32_t id) {
  EMBSCALE_EXPECTS(id < kMaxIds, "reuse distance ids must be below 2^31 - 2");
  if (id >= last_.size()) last_.resize(std::max<std::size_t>(std::size_t{id} + 1, 2 * last_.size()), kNone);
}

std::int64_t ReuseDistanceCounter::record(std::uint32_t id) {
  if (now_ >= times_) compact();
  ++accesses_;
  const std::uint32_t previous = last_[id];
  std::int64_t distance = kCold;
  if (previous == kNone) {
    ++live_;
    at_distance_.push_back(0);  // distances of later reuses stay below live_
  } else {
    // Marks after `previous`: the distinct keys accessed since, x's own mark being at `previous`.
    distance = live_ - marks_up_to(previous);
    clear_mark(previous);
  }
  set_mark_now();
  last_[id] = now_;
  ++now_;
  return distance;
}

std::int64_t ReuseDistanceCounter::access(std::uint32_t id) {
  make_room(id);
  const std::int64_t distance = record(id);
  if (distance != kCold) ++at_distance_[static_cast<std::size_t>(distance)];
  return distance;
}

void ReuseDistanceCounter::access_all(std::span<const std::uint32_t> ids, std::span<std::int64_t> distances) {
  // Prefetch distances, in accesses: the latest time of a key a few accesses ahead, then (once
  // that has arrived) its bit word; the tree's nodes are few and stay in cache.
  constexpr std::size_t kAhead = 8;
  constexpr std::size_t kNear = 4;
  const std::size_t n = ids.size();
  if (n > 0) make_room(*std::max_element(ids.begin(), ids.end()));
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&last_[ids[i + kAhead]]);
    if (i + kNear < n) {
      const std::uint32_t previous = last_[ids[i + kNear]];  // may still move: a hint only
      if (previous < times_) __builtin_prefetch(&bits_[previous / 64]);
    }
    distances[i] = record(ids[i]);
  }
  // The increments are independent: a tight loop with a deep prefetch keeps many misses in flight.
  constexpr std::size_t kHistogramAhead = 32;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kHistogramAhead < n && distances[i + kHistogramAhead] != kCold)
      __builtin_prefetch(&at_distance_[static_cast<std::size_t>(distances[i + kHistogramAhead])], 1);
    if (distances[i] != kCold) ++at_distance_[static_cast<std::size_t>(distances[i])];
  }
}

std::int64_t ReuseDistanceCounter::stack_depth(std::uint32_t id) const {
  if (id >= last_.size() || last_[id] == kNone) return kCold;
  return live_ - marks_up_to(last_[id]);  // as in access(): the marks after id's own
}

void ReuseDistanceCounter::compact() {
  // Renumber the marked times 0..live_-1 in order (distances depend only on the order of marks):
  // a key's new time is the number of marks before its latest one, from the words' prefix counts
  // and a popcount within its word.
  const std::size_t old_words = bits_.size();
  std::vector<std::uint32_t> before(old_words + 1, 0);  // marks in words [0, w)
  for (std::size_t w = 0; w < old_words; ++w)
    before[w + 1] = before[w] + static_cast<std::uint32_t>(popcount64(bits_[w]));
  for (std::uint32_t& t : last_) {
    if (t == kNone) continue;
    const std::size_t w = t / 64;
    t = before[w] + static_cast<std::uint32_t>(popcount64(bits_[w] & ((std::uint64_t{1} << (t % 64)) - 1)));
  }
  // At least twice the live marks (plus the one the coming access may add), so that the next
  // compaction is at least live_ accesses away; never shrinks; whole words.
  const std::size_t times =
      (std::max({std::size_t{kMinTimes}, std::size_t{times_}, 2 * (std::size_t{live_} + 1)}) + 63) / 64 * 64;
  times_ = static_cast<std::uint32_t>(times);
  const std::size_t words = times / 64;
  bits_.assign(words, 0);
  for (std::size_t w = 0; w < live_ / 64; ++w) bits_[w] = ~std::uint64_t{0};
  if (live_ % 64 != 0) bits_[live_ / 64] = (std::uint64_t{1} << (live_ % 64)) - 1;
  // Linear Fenwick build over the closed words' counts (the full words below live_; the rest
  // count 0 until they close): each node passes its sum to its parent.
  closed_ = live_ / 64;
  tree_.assign(words + 1, 0);
  for (std::size_t i = 1; i <= closed_; ++i) tree_[i] = 64;
  for (std::size_t i = 1; i <= words; ++i) {
    const std::size_t parent = i + (i & (~i + 1));
    if (parent <= words) tree_[parent] += tree_[i];
  }
  now_ = live_;
}

double ReuseDistanceCounter::lru_hit_ratio(std::int64_t capacity) const {
  if (accesses_ == 0) return 0.0;
  const auto end =
      static_cast<std::size_t>(std::clamp<std::int64_t>(capacity, 0, static_cast<std::int64_t>(at_distance_.size())));
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
    const std::int64_t ranks[] = {ceil_per_mille(reuses, 500), ceil_per_mille(reuses, 900),
                                  ceil_per_mille(reuses, 990)};
    std::int64_t* quantiles[] = {&stats.median, &stats.p90, &stats.p99};
    std::size_t next_quantile = 0;
    std::int64_t seen = 0;
    for (std::size_t d = 0; d < at_distance_.size(); ++d) {
      if (at_distance_[d] == 0) continue;
      seen += at_distance_[d];
      const auto bucket = static_cast<std::size_t>(std::bit_width(d));  // 0 for d = 0, i for [2^(i-1), 2^i)
      if (bucket >= stats.histogram.size()) stats.histogram.resize(bucket + 1, 0);
      stats.histogram[bucket] += at_distance_[d];
      while (next_quantile < 3 && seen >= ranks[next_quantile])
        *quantiles[next_quantile++] = static_cast<std::int64_t>(d);
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
