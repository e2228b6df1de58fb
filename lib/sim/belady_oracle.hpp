// BeladyOracle: Belady's optimal replacement (MIN, 1966), offline, with bypass: the most hits any
// cache of `capacity` keys can have on a recorded stream, the upper bound for every policy.
//
// Definition. Accesses come in calls (one table call's keys in order, distinct within the call);
// an access hits when the key was resident just before it. On a miss with the cache full, of the
// residents and the newcomer the one whose next use is farthest (or never) stays out: a resident
// is evicted for the newcomer, or the newcomer is not inserted at all (bypass). The table may
// refuse newcomers too, so only MIN with bypass bounds it (MIN that must insert can lose hits).
// Ties are only between keys never used again, which are interchangeable: hit counts are unique.
//
// Cost. append() maps keys to dense 32-bit ids (KeyIndex) and keeps the stream: 4 bytes per
// access and 8 per call, plus KeyIndex's 32-64 per distinct key. hits_per_call() computes every
// access's next use in one backward pass (4 more bytes per access, freed at return), then
// replays the stream with the residents in an indexed max-heap on next use: O(N log capacity)
// for N accesses, per capacity asked. At most 2^32 - 2 accesses (32-bit times).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "workloads/key_index.hpp"

namespace embscale::sim {

class BeladyOracle {
 public:
  // Records one call's keys (distinct within the call), in order.
  void append(std::span<const std::int64_t> call);

  std::int64_t accesses() const noexcept { return static_cast<std::int64_t>(stream_.size()); }
  std::int64_t calls() const noexcept { return static_cast<std::int64_t>(call_ends_.size()); }
  std::int64_t distinct() const noexcept { return index_.size(); }

  // MIN's hits in each recorded call with a cache of `capacity` >= 1 keys, in call order.
  std::vector<std::int64_t> hits_per_call(std::int64_t capacity) const;

 private:
  workloads::KeyIndex index_;
  std::vector<std::uint32_t> stream_;    // dense ids, in access order
  std::vector<std::int64_t> call_ends_;  // call c is stream_[call_ends_[c - 1], call_ends_[c])
};

}  // namespace embscale::sim
