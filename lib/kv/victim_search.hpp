// Eviction victims of a full bucket: the slots of lowest score, ties broken by the smallest key
// (so the choice does not depend on slot order, which erase and rehash permute).
//
// A full bucket keeps a shortlist of its next victims: the `count` smallest (score, key) pairs
// of its slots, in ascending order, found by one scan of the bucket (kv/host_table.cpp keeps
// it true under every change, or empties it). Evictions then take victims from the shortlist
// and a bucket is scanned once per up to kShortlist evictions instead of once per eviction;
// the scan reads bucket_capacity scores (16 cache lines at 128 slots) and, where scores tie
// (one call gives all its keys one score under TIMESTAMP and STEP), as many keys again.
//
// The scan keeps the pairs below the current kShortlist-th smallest: a chunk of scores is
// compared with that bound 8 (AVX-512F) or 4 (AVX2, unsigned compares through a flipped sign
// bit) at a time and only the slots at or below it are looked at one by one (their keys are
// read only there). Implementations are chosen once at run time, as the digest matchers are
// (kv/digest_match.hpp); all give the same shortlist (tests/kv/victim_search_test.cpp).
#pragma once

#include <cstdint>
#include <string>

namespace embscale::kv {

// The next victims of one full bucket. Invariant: slots[0, count) are the bucket's `count`
// smallest (score, key) pairs, in ascending order; count 0 means unknown (scan again).
struct VictimShortlist {
  static constexpr int kShortlist = 7;  // 16 bytes a bucket
  std::uint16_t slots[kShortlist];
  std::uint8_t count = 0;

  // The score of `slot` changed from `before` to `after` (same key): the shortlist stays
  // true, shortened to the entries before that slot when it rose, emptied when it fell (the slot
  // may now belong anywhere).
  void score_changed(std::uint32_t slot, std::uint64_t before, std::uint64_t after) noexcept {
    if (count == 0) return;
    if (after < before) {
      count = 0;
      return;
    }
    for (std::uint8_t p = 0; p < count; ++p)
      if (slots[p] == slot) {
        count = p;
        return;
      }
  }
  // The first victim leaves the bucket (the caller then places the newcomer taking its slot).
  void pop_front() noexcept {
    for (std::uint8_t p = 1; p < count; ++p) slots[p - 1] = slots[p];
    --count;
  }
};

// Fills `out` with the min(count, kShortlist) smallest (score, key) pairs of scores[0, count)
// and keys[0, count), ascending; count >= 1; keys distinct and below 2^64 - 1.
using ShortlistScan = void (*)(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count,
                               VictimShortlist& out);

void scan_shortlist_portable(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count,
                             VictimShortlist& out);
void scan_shortlist_avx2(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count,
                         VictimShortlist& out);
void scan_shortlist_avx512(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count,
                           VictimShortlist& out);

// The best implementation this CPU runs, and its name ("avx512", "avx2", "portable").
ShortlistScan best_shortlist_scan() noexcept;
std::string shortlist_scan_name(ShortlistScan scan);

}  // namespace embscale::kv
