#include "kv/victim_search.hpp"

#include <bit>
#include <limits>

#include "kv/digest_match.hpp"  // cpu_supports_avx2 / cpu_supports_avx512

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace embscale::kv {
namespace {

constexpr int kShortlist = VictimShortlist::kShortlist;
constexpr std::uint64_t kNoBound = std::numeric_limits<std::uint64_t>::max();

// The smallest pairs seen so far, ascending, while a scan runs.
class Smallest {
 public:
  // Slots of a higher score cannot enter: the scans skip them without reading their keys.
  std::uint64_t bound() const noexcept { return n_ < kShortlist ? kNoBound : score_[kShortlist - 1]; }

  void offer(std::uint64_t score, std::uint64_t key, std::uint32_t slot) noexcept {
    if (n_ == kShortlist && !less(score, key, kShortlist - 1)) return;
    int p = n_ < kShortlist ? n_++ : kShortlist - 1;
    for (; p > 0 && less(score, key, p - 1); --p) {
      score_[p] = score_[p - 1];
      key_[p] = key_[p - 1];
      slot_[p] = slot_[p - 1];
    }
    score_[p] = score;
    key_[p] = key;
    slot_[p] = static_cast<std::uint16_t>(slot);
  }

  void write(VictimShortlist& out) const noexcept {
    for (int p = 0; p < n_; ++p) out.slots[p] = slot_[p];
    out.count = static_cast<std::uint8_t>(n_);
  }

 private:
  bool less(std::uint64_t score, std::uint64_t key, int p) const noexcept {
    return score < score_[p] || (score == score_[p] && key < key_[p]);
  }

  std::uint64_t score_[kShortlist];
  std::uint64_t key_[kShortlist];
  std::uint16_t slot_[kShortlist];
  int n_ = 0;
};

void scan_tail(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t from, std::uint32_t count,
               Smallest& smallest) noexcept {
  for (std::uint32_t i = from; i < count; ++i)
    if (scores[i] <= smallest.bound()) smallest.offer(scores[i], keys[i], i);
}

}  // namespace

void scan_shortlist_portable(const std::uint64_t* scores, const std::uint64_t* keys, std::uint32_t count,
                             VictimShortlist& out) {
  Smallest smallest;
  scan_tail(scores, keys, 0, count, smallest);
  smallest.write(out);
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void scan_shortlist_avx512(const std::uint64_t* scores, const std::uint64_t* keys,
                                                              std::uint32_t count, VictimShortlist& out) {
  Smallest smallest;
  const std::uint32_t whole = count & ~7U;
  for (std::uint32_t i = 0; i < whole; i += 8) {
    const __m512i bound = _mm512_set1_epi64(static_cast<long long>(smallest.bound()));
    // Lanes at or below the bound; offer() settles ties and a bound lowered within the chunk.
    for (auto lanes = static_cast<std::uint32_t>(_mm512_cmple_epu64_mask(_mm512_loadu_si512(scores + i), bound));
         lanes != 0; lanes &= lanes - 1) {
      const std::uint32_t slot = i + static_cast<std::uint32_t>(std::countr_zero(lanes));
      smallest.offer(scores[slot], keys[slot], slot);
    }
  }
  scan_tail(scores, keys, whole, count, smallest);
  smallest.write(out);
}

__attribute__((target("avx2"))) void scan_shortlist_avx2(const std::uint64_t* scores, const std::uint64_t* keys,
                                                         std::uint32_t count, VictimShortlist& out) {
  // AVX2 compares signed 64-bit lanes: x > y unsigned  <=>  (x ^ sign) > (y ^ sign) signed.
  const __m256i sign = _mm256_set1_epi64x(static_cast<long long>(0x8000000000000000ULL));
  Smallest smallest;
  const std::uint32_t whole = count & ~3U;
  for (std::uint32_t i = 0; i < whole; i += 4) {
    const __m256i bound = _mm256_xor_si256(_mm256_set1_epi64x(static_cast<long long>(smallest.bound())), sign);
    const __m256i s = _mm256_xor_si256(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(scores + i)), sign);
    const auto above =
        static_cast<std::uint32_t>(_mm256_movemask_pd(_mm256_castsi256_pd(_mm256_cmpgt_epi64(s, bound))));
    for (std::uint32_t lanes = ~above & 0xFU; lanes != 0; lanes &= lanes - 1) {
      const std::uint32_t slot = i + static_cast<std::uint32_t>(std::countr_zero(lanes));
      smallest.offer(scores[slot], keys[slot], slot);
    }
  }
  scan_tail(scores, keys, whole, count, smallest);
  smallest.write(out);
}
#else
void scan_shortlist_avx512(const std::uint64_t* s, const std::uint64_t* k, std::uint32_t n, VictimShortlist& out) {
  scan_shortlist_portable(s, k, n, out);
}
void scan_shortlist_avx2(const std::uint64_t* s, const std::uint64_t* k, std::uint32_t n, VictimShortlist& out) {
  scan_shortlist_portable(s, k, n, out);
}
#endif

ShortlistScan best_shortlist_scan() noexcept {
  if (cpu_supports_avx512()) return scan_shortlist_avx512;
  if (cpu_supports_avx2()) return scan_shortlist_avx2;
  return scan_shortlist_portable;
}

std::string shortlist_scan_name(ShortlistScan scan) {
  if (scan == scan_shortlist_avx512) return "avx512";
  if (scan == scan_shortlist_avx2) return "avx2";
  return "portable";
}

}  // namespace embscale::kv
