// AccessObserver: how a dynamic table's store shows an observer (lib/sim's eviction study) its
// access stream. A store with an observer calls on_call after each of its read calls (one
// find_or_insert: the distinct keys of one step, in the order the table processed them), inside
// the timed region: an observer only copies, the oracles run after the step. A store without one
// pays one branch per call.
#pragma once

#include <cstdint>
#include <span>

namespace embscale::kv {

// What one table call did to its keys (the eviction tier's view: in caching mode, hits are keys
// found in the fast tier, not those promoted from the slow one).
struct CallOutcome {
  std::int64_t hits = 0;          // keys the tier held before the call
  std::int64_t inserts = 0;       // keys added
  std::int64_t evictions = 0;     // keys removed to make room
  std::int64_t refused = 0;       // keys refused on score (a full bucket of higher scores)
  std::int64_t not_admitted = 0;  // newcomers the admission filter kept out
};

class AccessObserver {
 public:
  virtual ~AccessObserver() = default;
  // `keys`: one call's keys, distinct, in order; valid only during the call.
  virtual void on_call(std::span<const std::int64_t> keys, const CallOutcome& outcome) = 0;
  // The table's epoch and set_score value changed (RowStore::set_score_clock): the calls after
  // this read them.
  virtual void on_score_clock(std::uint32_t epoch, std::uint64_t score) {
    (void)epoch;
    (void)score;
  }
};

}  // namespace embscale::kv
