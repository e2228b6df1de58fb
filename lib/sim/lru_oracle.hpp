// LruOracle: a global LRU cache of `capacity` keys fed a table's access stream, exact.
//
// Accesses come in calls: one table call's keys in order, distinct within the call. Each key is
// one access; it is a hit when the key was resident just before its own access. LRU is a stack
// algorithm (Mattson et al., 1970): a cache of C keys holds exactly the C most recently accessed
// keys, so an access hits iff its reuse distance (the distinct other keys accessed since its
// previous access) is below C. This class is therefore workloads' exact reuse-distance counter
// behind workloads' dense key numbering, not a second LRU: no list, nothing evicted explicitly,
// and the same pass gives the hit ratio of every other capacity (hit_ratio_at).
//
// Cost per access: one KeyIndex probe and O(log D) Fenwick-tree work (D distinct keys so far); a
// call's ids are found first and its reuse distances counted after, each pass prefetching ahead
// (KeyIndex::find_or_insert_all, ReuseDistanceCounter::access_all), so the misses of a call's
// cold keys overlap. Memory per distinct key: KeyIndex's 32-64 bytes plus the counter's ~13
// (workloads/key_index.hpp, workloads/reuse_distance.hpp); nothing per access. At most 2^31 - 2
// distinct keys.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workloads/key_index.hpp"
#include "workloads/reuse_distance.hpp"

namespace embscale::sim {

class LruOracle {
 public:
  // capacity >= 1 keys.
  explicit LruOracle(std::int64_t capacity);

  // Applies one call's accesses in order; returns how many hit. Keys must be distinct within the
  // call (a repeat would count as a hit here, where the table sees the key once).
  std::int64_t access(std::span<const std::int64_t> call);

  // Whether `key` is resident now: accessed before, and fewer than capacity() distinct other keys
  // since. O(log D).
  bool contains(std::int64_t key) const;

  std::int64_t capacity() const noexcept { return capacity_; }
  // Keys resident now: min(distinct keys seen, capacity()).
  std::int64_t size() const noexcept;
  std::int64_t accesses() const noexcept { return distances_.accesses(); }

  // The hit ratio an LRU cache of `capacity` keys would have had over every access so far (cold
  // first accesses count as misses; 0 before any access). O(min(capacity, D)).
  double hit_ratio_at(std::int64_t capacity) const;

 private:
  workloads::KeyIndex index_;
  workloads::ReuseDistanceCounter distances_;
  std::int64_t capacity_;
  // Scratch of one call (kept: no allocation per call once the largest call has been seen).
  std::vector<std::uint32_t> ids_;
  std::vector<std::int64_t> call_distances_;
};

}  // namespace embscale::sim
