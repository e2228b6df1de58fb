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
// Cost per access: one KeyIndex probe and O(log D) Fenwick-tree work (D distinct keys so far).
// Memory per distinct key: KeyIndex's 24-48 bytes plus the counter's 21-29
// (workloads/key_index.hpp, workloads/reuse_distance.hpp); nothing per access. Keys of at most
// 2^31 - 2 distinct values.
#pragma once

#include <cstdint>
#include <span>

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
};

}  // namespace embscale::sim
