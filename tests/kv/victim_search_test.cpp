// The victim searches against a plain minimum over (score, key) pairs, for every bucket size the
// table allows and the tails in between, with scores that rarely tie (random) and that mostly
// tie (a few values, as STEP scores do); the SIMD ones only where this CPU runs them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <random>
#include <unordered_set>
#include <vector>

#include "kv/victim_search.hpp"
#include "kv/digest_match.hpp"

namespace embscale::kv {
namespace {

std::uint32_t plain_minimum(const std::vector<std::uint64_t>& scores, const std::vector<std::uint64_t>& keys,
                            std::uint32_t count) {
  std::uint32_t best = 0;
  for (std::uint32_t i = 0; i < count; ++i)
    if (std::pair(scores[i], keys[i]) < std::pair(scores[best], keys[best])) best = i;
  return best;
}

TEST(VictimSearch, EveryImplementationAgreesWithAPlainMinimum) {
  std::vector<VictimSearch> searches{find_victim_portable};
  if (cpu_supports_avx2()) searches.push_back(find_victim_avx2);
  if (cpu_supports_avx512()) searches.push_back(find_victim_avx512);
  std::mt19937_64 rng(29);
  std::vector<std::uint32_t> counts;
  for (std::uint32_t c = 1; c <= 40; ++c) counts.push_back(c);
  for (const std::uint32_t c : {16U, 63U, 64U, 65U, 127U, 128U, 129U, 255U, 256U, 512U, 1023U, 1024U}) counts.push_back(c);
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
      const auto want = plain_minimum(scores, keys, count);
      for (const auto search : searches)
        ASSERT_EQ(search(scores.data(), keys.data(), count), want)
            << victim_search_name(search) << " count " << count << " trial " << trial;
    }
  }
  std::printf("victim searches checked: portable%s%s; the table uses %s\n", cpu_supports_avx2() ? ", avx2" : "",
              cpu_supports_avx512() ? ", avx512" : "", victim_search_name(best_victim_search()).c_str());
}

}  // namespace
}  // namespace embscale::kv
