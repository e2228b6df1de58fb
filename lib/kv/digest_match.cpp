#include "kv/digest_match.hpp"

#include <cstring>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace embscale::kv {
namespace {

std::uint64_t below(std::uint32_t count) noexcept { return count >= 64 ? ~0ULL : (1ULL << count) - 1; }

}  // namespace

std::uint64_t match_digests_portable(const std::uint8_t* digests, std::uint32_t count, std::uint8_t digest) {
  std::uint64_t mask = 0;
  const std::uint64_t pattern = 0x0101010101010101ULL * digest;
  for (std::uint32_t word = 0; word < 8 && word * 8 < count; ++word) {
    std::uint64_t bytes;
    std::memcpy(&bytes, digests + 8 * word, 8);
    // Exact zero-byte detection (no borrow between bytes): high bit of each byte set when zero.
    const std::uint64_t x = bytes ^ pattern;
    const std::uint64_t zero = ~(((x & 0x7F7F7F7F7F7F7F7FULL) + 0x7F7F7F7F7F7F7F7FULL) | x | 0x7F7F7F7F7F7F7F7FULL);
    // Gather the eight high bits into eight mask bits.
    const std::uint64_t packed = ((zero >> 7) * 0x0102040810204080ULL) >> 56;
    mask |= packed << (8 * word);
  }
  return mask & below(count);
}

#if defined(__x86_64__)
__attribute__((target("avx2"))) std::uint64_t match_digests_avx2(const std::uint8_t* digests, std::uint32_t count,
                                                                 std::uint8_t digest) {
  const __m256i probe = _mm256_set1_epi8(static_cast<char>(digest));
  const __m256i lo = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(digests));
  const __m256i hi = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(digests + 32));
  const auto m_lo = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(lo, probe)));
  const auto m_hi = static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(hi, probe)));
  return ((std::uint64_t{m_hi} << 32) | m_lo) & below(count);
}

__attribute__((target("avx512f,avx512bw"))) std::uint64_t match_digests_avx512(const std::uint8_t* digests,
                                                                               std::uint32_t count,
                                                                               std::uint8_t digest) {
  const __m512i probe = _mm512_set1_epi8(static_cast<char>(digest));
  const __m512i all = _mm512_loadu_si512(digests);
  return static_cast<std::uint64_t>(_mm512_cmpeq_epi8_mask(all, probe)) & below(count);
}

bool cpu_supports_avx2() noexcept { return __builtin_cpu_supports("avx2"); }
bool cpu_supports_avx512() noexcept { return __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512f"); }
#else
std::uint64_t match_digests_avx2(const std::uint8_t* d, std::uint32_t n, std::uint8_t x) {
  return match_digests_portable(d, n, x);
}
std::uint64_t match_digests_avx512(const std::uint8_t* d, std::uint32_t n, std::uint8_t x) {
  return match_digests_portable(d, n, x);
}
bool cpu_supports_avx2() noexcept { return false; }
bool cpu_supports_avx512() noexcept { return false; }
#endif

DigestMatcher best_digest_matcher() noexcept {
  if (cpu_supports_avx512()) return match_digests_avx512;
  if (cpu_supports_avx2()) return match_digests_avx2;
  return match_digests_portable;
}

std::string digest_matcher_name(DigestMatcher matcher) {
  if (matcher == match_digests_avx512) return "avx512";
  if (matcher == match_digests_avx2) return "avx2";
  return "portable";
}

}  // namespace embscale::kv
