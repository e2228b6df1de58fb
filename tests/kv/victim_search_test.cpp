// The shortlist scans against a plain sort of the (score, key) pairs, for every bucket size the
// table allows and the tails in between, with scores that rarely tie (random) and that mostly
// tie (a few values, as STEP scores do); the SIMD ones only where this CPU runs them. Then the
// shortlist's own rules (a rising score shortens it, a falling one empties it).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <unordered_set>
#include <vector>

#include "kv/digest_match.hpp"
#include "kv/victim_search.hpp"

namespace embscale::kv {
namespace {

// The slots of the min(count, kShortlist) smallest pairs, ascending.
std::vector<std::uint16_t> plain_shortlist(const std::vector<std::uint64_t>& scores,
                                           const std::vector<std::uint64_t>& keys, std::uint32_t count) {
  std::vector<std::uint16_t> slots(count);
  for (std::uint32_t i = 0; i < count; ++i) slots[i] = static_cast<std::uint16_t>(i);
  std::sort(slots.begin(), slots.end(),
            [&](auto a, auto b) { return std::pair(scores[a], keys[a]) < std::pair(scores[b], keys[b]); });
  slots.resize(std::min<std::size_t>(count, VictimShortlist::kShortlist));
  return slots;
}

std::vector<std::uint16_t> slots_of(const VictimShortlist& s) { return {s.slots, s.slots + s.count}; }

TEST(VictimShortlist, EveryScanAgreesWithAPlainSort) {
  std::vector<ShortlistScan> searches{scan_shortlist_portable};
  if (cpu_supports_avx2()) searches.push_back(scan_shortlist_avx2);
  if (cpu_supports_avx512()) searches.push_back(scan_shortlist_avx512);
  std::mt19937_64 rng(29);
  std::vector<std::uint32_t> counts;
  for (std::uint32_t c = 1; c <= 40; ++c) counts.push_back(c);
  for (const std::uint32_t c : {16U, 63U, 64U, 65U, 127U, 128U, 129U, 255U, 256U, 512U, 1023U, 1024U})
    counts.push_back(c);
  std::vector<std::uint64_t> scores(1024), keys(1024);
  for (int trial = 0; trial < 300; ++trial) {
    const int distinct_scores = trial % 3 == 0 ? 0 : (trial % 3 == 1 ? 3 : 1);  // 0: all random
    std::unordered_set<std::uint64_t> used;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      std::uint64_t key;
      do {  // distinct keys, extremes included, never the reserved 2^64 - 1
        key = trial % 5 == 0 ? rng() % 4096 : (rng() % 4 == 0 ? ~0ULL - 1 - rng() % 8 : rng() % (~0ULL - 1));
      } while (!used.insert(key).second);
      keys[i] = key;
      scores[i] = distinct_scores == 0 ? rng() : (distinct_scores == 1 ? 7 : (rng() % 3) * 0x7FFFFFFFFFFFFFFFULL);
    }
    for (const auto count : counts) {
      const auto want = plain_shortlist(scores, keys, count);
      for (const auto scan : searches) {
        VictimShortlist got;
        scan(scores.data(), keys.data(), count, got);
        ASSERT_EQ(slots_of(got), want) << shortlist_scan_name(scan) << " count " << count << " trial " << trial;
      }
    }
  }
  std::printf("shortlist scans checked: portable%s%s; the table uses %s\n", cpu_supports_avx2() ? ", avx2" : "",
              cpu_supports_avx512() ? ", avx512" : "", shortlist_scan_name(best_shortlist_scan()).c_str());
}

VictimShortlist shortlist_of(std::initializer_list<std::uint16_t> slots) {
  VictimShortlist s;
  for (const auto slot : slots) s.slots[s.count++] = slot;
  return s;
}

TEST(VictimShortlist, ARisingScoreShortensItAtThatSlotAndAFallingOneEmptiesIt) {
  auto s = shortlist_of({4, 9, 2, 7});
  s.score_changed(11, 5, 8);  // not on the list, rising: still true
  EXPECT_EQ(slots_of(s), (std::vector<std::uint16_t>{4, 9, 2, 7}));
  s.score_changed(2, 5, 8);  // third entry rose: the two before it stay the two smallest
  EXPECT_EQ(slots_of(s), (std::vector<std::uint16_t>{4, 9}));
  s.score_changed(11, 5, 5);  // unchanged
  EXPECT_EQ(s.count, 2);
  s.score_changed(11, 5, 4);  // fell: it may now be the smallest
  EXPECT_EQ(s.count, 0);
  s = shortlist_of({4, 9, 2});
  s.pop_front();
  EXPECT_EQ(slots_of(s), (std::vector<std::uint16_t>{9, 2}));
}

}  // namespace
}  // namespace embscale::kv
