// Reuse distances (LRU stack distances) of a stream of accesses, computed exactly.
//
// Definition: the reuse distance of an access to key x at time t, when x was last accessed at
// time p < t, is the number of DISTINCT keys other than x accessed in (p, t). A first access is
// "cold" (infinite distance). An LRU cache holding C keys hits exactly the accesses with distance
// < C (Mattson et al., 1970: LRU is a stack algorithm), so one pass yields the hit ratio of every
// cache size: hit(C) = #{accesses with distance < C} / #accesses (cold accesses always miss).
//
// Algorithm (Bennett & Kruskal, 1975): a bit per access time is 1 at each key's LATEST access
// time and 0 elsewhere; a Fenwick tree over 64-bit words of those bits counts the 1s before a
// word, popcount the rest (64 times smaller than a tree over times: it stays in cache). Invariant:
// the marks after time p are exactly the distinct keys accessed after p, one each (a key's
// earlier times were unmarked when it was re-accessed). So the distance of a reuse at p is
// live - prefix(p) (live = number of marks = distinct keys seen), one O(log T) query, then one
// O(log T) update clears x's mark at p; the new mark at now is a bit in the word being filled,
// which joins the tree once, when it is full (one update per 64 accesses).
//
// Memory proportional to distinct keys D, not to accesses N: times are renumbered when the tree
// is full (compaction: the D marked times keep their order and become 0..D-1, each key's new
// time being its rank among the marks, read off the bits) and the tree is kept at least 2D long,
// so a compaction (O(T / 64 + ids), all sequential) follows at least T/2 accesses: amortized
// O(1), and the total is O(N log D) time. Bytes per distinct key: 4 (last time) + 8 (count of
// accesses at each distance d < D) + 0.19 per time slot (the bit and the tree's share; 2 to 4
// slots per key): about 13. Nothing is kept per access. Ids are dense (KeyIndex): memory follows
// the largest id, so ids must be below 2^31.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/huge_page_allocator.hpp"

namespace embscale::workloads {

struct LruPoint {
  std::int64_t capacity = 0;  // keys the cache holds
  double hit_ratio = 0;       // share of all accesses (cold ones included) that hit
};

struct ReuseDistanceStats {
  std::int64_t accesses = 0;
  std::int64_t cold = 0;      // first accesses: infinite distance, a miss at every capacity
  std::int64_t distinct = 0;  // equal to cold
  // histogram[0]: distance 0 (the same key again); histogram[i], i >= 1: distances in
  // [2^(i-1), 2^i). Cold accesses are not in it. Empty when there is no reuse.
  std::vector<std::int64_t> histogram;
  // Nearest-rank quantiles of the distances of the reuses (cold accesses excluded): the r-th
  // smallest distance, r = ceil(q * reuses) (share_rank.hpp); -1 when there is no reuse.
  std::int64_t median = -1;
  std::int64_t p90 = -1;
  std::int64_t p99 = -1;
  // Hit ratio of an LRU cache of 2^k keys for k = 0, 1, ... up to the first 2^k >= distinct;
  // larger caches hit the same (accesses - cold) / accesses.
  std::vector<LruPoint> lru_curve;
};

class ReuseDistanceCounter {
 public:
  static constexpr std::int64_t kCold = -1;
  // Ids below 2^31 - 2: then live keys <= 2^31 - 2, times < 2 * (live + 1) <= 2^32 - 2 < kNone.
  static constexpr std::uint32_t kMaxIds = (std::uint32_t{1} << 31) - 2;

  // Records an access to key `id` (a dense id, below 2^31) and returns its reuse distance, or
  // kCold for the key's first access.
  std::int64_t access(std::uint32_t id);
  // distances[i] = access(ids[i]) for i = 0, 1, ... in turn (distances.size() >= ids.size()),
  // faster: the next keys' state is prefetched while one is counted, and the histogram's
  // increments (scattered over D counters) are made after the batch, where their misses overlap.
  void access_all(std::span<const std::uint32_t> ids, std::span<std::int64_t> distances);

  // The reuse distance an access to `id` would have now: the distinct keys other than `id`
  // accessed since its latest access (its depth in the LRU stack, 0 for the latest key), or kCold
  // when it was never accessed. An LRU cache of C keys holds `id` now iff this is in [0, C).
  // O(log T); changes nothing.
  std::int64_t stack_depth(std::uint32_t id) const;

  // Hit ratio of an LRU cache of `capacity` keys over the accesses so far (0 when there is none).
  double lru_hit_ratio(std::int64_t capacity) const;

  std::int64_t accesses() const noexcept { return accesses_; }
  ReuseDistanceStats summarize() const;

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  void make_room(std::uint32_t id);  // last_ covers id; checks the id's range
  // access() without the histogram's increment.
  std::int64_t record(std::uint32_t id);
  std::int64_t marks_up_to(std::uint32_t time) const;  // marks at times <= time
  void add_to_tree(std::size_t word, std::uint32_t delta);
  void clear_mark(std::uint32_t time);
  void set_mark_now();  // marks now_, closing the word before it when now_ starts a word
  void compact();

  HugePageVector<std::uint64_t> bits_;  // bit t % 64 of bits_[t / 64]: t is some key's latest access
  HugePageVector<std::uint32_t>
      tree_;  // Fenwick tree over the closed words, 1-based: tree_[i] counts the bits of words [i - lowbit(i), i)
  std::size_t closed_ = 0;                    // words [0, closed_) are in the tree; closed_ <= now_ / 64
  HugePageVector<std::uint32_t> last_;        // last_[id]: latest access time of id, or kNone
  HugePageVector<std::int64_t> at_distance_;  // at_distance_[d]: reuses at distance d; size() == live_
  std::uint32_t times_ = 0;                   // the time capacity: 64 bits_.size()
  std::uint32_t now_ = 0;                     // the next access time; times [now_, times_) are unused
  std::uint32_t live_ = 0;                    // marks in the tree: distinct keys seen
  std::int64_t accesses_ = 0;
};

}  // namespace embscale::workloads
