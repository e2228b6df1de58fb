#include "kv/victim_search.hpp"

#include <algorithm>
#include <limits>

#include "kv/digest_match.hpp"  // cpu_supports_avx2 / cpu_supports_avx512

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace embscale::kv {
namespace {

constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();

// The smallest (key, index) among the lanes' candidates and the scalar tail [from, count):
// lanes hold kNone where they saw no slot of the lowest score.
std::uint32_t finish(const std::uint64_t* lane_keys, const std::uint64_t* lane_index, int lanes,
                     const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t from, std::uint32_t count,
                     std::uint64_t low) {
  std::uint64_t best_key = kNone;
  std::uint32_t best = count;
  for (int l = 0; l < lanes; ++l)
    if (lane_index[l] != kNone && (best == count || lane_keys[l] < best_key)) {
      best_key = lane_keys[l];
      best = static_cast<std::uint32_t>(lane_index[l]);
    }
  for (std::uint32_t i = from; i < count; ++i)
    if (scores[i] == low && (best == count || keys[i] < best_key)) {
      best_key = keys[i];
      best = i;
    }
  return best;
}

}  // namespace

std::uint32_t find_victim_portable(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count) {
  std::uint32_t victim = 0;
  for (std::uint32_t i = 1; i < count; ++i)
    if (scores[i] < scores[victim] || (scores[i] == scores[victim] && keys[i] < keys[victim])) victim = i;
  return victim;
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) std::uint32_t find_victim_avx512(const std::uint64_t* scores,
                                                                    const std::uint64_t* keys, std::uint32_t count) {
  const std::uint32_t whole = count & ~7U;
  __m512i low_lanes = _mm512_set1_epi64(static_cast<long long>(kNone));
  // The masked form with every lane set is _mm512_min_epu64 without GCC 12's false
  // -Wmaybe-uninitialized on the latter's _mm512_undefined_epi32 operand.
  for (std::uint32_t i = 0; i < whole; i += 8)
    low_lanes = _mm512_mask_min_epu64(low_lanes, 0xFF, low_lanes, _mm512_loadu_si512(scores + i));
  alignas(64) std::uint64_t lanes[8];
  _mm512_store_si512(lanes, low_lanes);
  std::uint64_t low = *std::min_element(lanes, lanes + 8);
  for (std::uint32_t i = whole; i < count; ++i) low = std::min(low, scores[i]);

  const __m512i low_all = _mm512_set1_epi64(static_cast<long long>(low));
  __m512i best_keys = _mm512_set1_epi64(static_cast<long long>(kNone));
  __m512i best_index = _mm512_set1_epi64(static_cast<long long>(kNone));
  __m512i index = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
  const __m512i step = _mm512_set1_epi64(8);
  for (std::uint32_t i = 0; i < whole; i += 8, index = _mm512_add_epi64(index, step)) {
    const __mmask8 tie = _mm512_cmpeq_epu64_mask(_mm512_loadu_si512(scores + i), low_all);
    if (tie == 0) continue;  // keys of this chunk stay unread
    const __m512i k = _mm512_loadu_si512(keys + i);
    // Every stored key is below kNone (reserved), so a lane's first candidate always wins.
    const __mmask8 better = tie & _mm512_cmplt_epu64_mask(k, best_keys);
    best_keys = _mm512_mask_mov_epi64(best_keys, better, k);
    best_index = _mm512_mask_mov_epi64(best_index, better, index);
  }
  alignas(64) std::uint64_t lane_keys[8];
  alignas(64) std::uint64_t lane_index[8];
  _mm512_store_si512(lane_keys, best_keys);
  _mm512_store_si512(lane_index, best_index);
  return finish(lane_keys, lane_index, 8, scores, keys, whole, count, low);
}

__attribute__((target("avx2"))) std::uint32_t find_victim_avx2(const std::uint64_t* scores, const std::uint64_t* keys,
                                                               std::uint32_t count) {
  // AVX2 compares signed 64-bit lanes: x < y unsigned  <=>  (x ^ sign) < (y ^ sign) signed.
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ULL));
  const std::uint32_t whole = count & ~3U;
  __m256i low_lanes = _mm256_xor_si256(_mm256_set1_epi64x(static_cast<long long>(kNone)), sign);
  for (std::uint32_t i = 0; i < whole; i += 4) {
    const __m256i s = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scores + i)), sign);
    low_lanes = _mm256_blendv_epi8(low_lanes, s, _mm256_cmpgt_epi64(low_lanes, s));
  }
  alignas(32) std::uint64_t lanes[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lanes), _mm256_xor_si256(low_lanes, sign));
  std::uint64_t low = std::min({lanes[0], lanes[1], lanes[2], lanes[3]});
  for (std::uint32_t i = whole; i < count; ++i) low = std::min(low, scores[i]);

  const __m256i low_all = _mm256_set1_epi64x(static_cast<long long>(low));
  const __m256i none = _mm256_set1_epi64x(static_cast<long long>(kNone));
  __m256i best_keys = _mm256_xor_si256(none, sign);  // biased
  __m256i best_index = none;
  __m256i index = _mm256_setr_epi64x(0, 1, 2, 3);
  const __m256i step = _mm256_set1_epi64x(4);
  for (std::uint32_t i = 0; i < whole; i += 4, index = _mm256_add_epi64(index, step)) {
    const __m256i tie =
        _mm256_cmpeq_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scores + i)), low_all);
    if (_mm256_testz_si256(tie, tie)) continue;
    const __m256i k = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(keys + i)), sign);
    const __m256i better = _mm256_and_si256(tie, _mm256_cmpgt_epi64(best_keys, k));
    best_keys = _mm256_blendv_epi8(best_keys, k, better);
    best_index = _mm256_blendv_epi8(best_index, index, better);
  }
  alignas(32) std::uint64_t lane_keys[4];
  alignas(32) std::uint64_t lane_index[4];
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_keys), _mm256_xor_si256(best_keys, sign));
  _mm256_store_si256(reinterpret_cast<__m256i*>(lane_index), best_index);
  return finish(lane_keys, lane_index, 4, scores, keys, whole, count, low);
}
#else
std::uint32_t find_victim_avx512(const std::uint64_t* s, const std::uint64_t* k, std::uint32_t n) {
  return find_victim_portable(s, k, n);
}
std::uint32_t find_victim_avx2(const std::uint64_t* s, const std::uint64_t* k, std::uint32_t n) {
  return find_victim_portable(s, k, n);
}
#endif

VictimSearch best_victim_search() noexcept {
  if (cpu_supports_avx512()) return find_victim_avx512;
  if (cpu_supports_avx2()) return find_victim_avx2;
  return find_victim_portable;
}

std::string victim_search_name(VictimSearch search) {
  if (search == find_victim_avx512) return "avx512";
  if (search == find_victim_avx2) return "avx2";
  return "portable";
}

}  // namespace embscale::kv
