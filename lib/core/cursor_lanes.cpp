#include "core/cursor_lanes.hpp"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#include <immintrin.h>
#define EMBSCALE_X86_PHILOX 1
#endif

#include "core/error.hpp"

namespace embscale {
namespace {

// Philox4x32-10 (core/rng.hpp) with its four 32-bit words in the low halves of 64-bit lanes. The
// high halves may carry garbage between rounds: the multiplies read low halves only, and the
// result masks or shifts them away. Keys add modulo 2^32 in the low halves likewise.
void bits_portable(CursorLanes& lanes, std::size_t first, std::size_t count) noexcept {
  for (std::size_t i = first; i < count; ++i)
    lanes.bits[i] = CounterRng(lanes.seeds[i], lanes.streams[i]).bits64(lanes.counters[i]);
}

#ifdef EMBSCALE_X86_PHILOX
// GCC 12's AVX-512 shift and multiply intrinsics start from _mm512_undefined_epi32(), which
// -Wmaybe-uninitialized reports at every use (GCC bug 105593): a false positive, silenced here only.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
[[gnu::target("arch=x86-64-v4")]] std::size_t bits_avx512(CursorLanes& lanes, std::size_t count) noexcept {
  const __m512i m0 = _mm512_set1_epi64(detail::kPhiloxM0), m1 = _mm512_set1_epi64(detail::kPhiloxM1);
  const __m512i w0 = _mm512_set1_epi64(detail::kPhiloxW0), w1 = _mm512_set1_epi64(detail::kPhiloxW1);
  const __m512i low = _mm512_set1_epi64(0xffffffff);
  std::size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m512i counter = _mm512_loadu_si512(lanes.counters.data() + i);
    const __m512i stream = _mm512_loadu_si512(lanes.streams.data() + i);
    __m512i k0 = _mm512_loadu_si512(lanes.seeds.data() + i);
    __m512i k1 = _mm512_srli_epi64(k0, 32);
    __m512i x0 = counter, x1 = _mm512_srli_epi64(counter, 32), x2 = stream, x3 = _mm512_srli_epi64(stream, 32);
    for (int round = 0; round < 10; ++round) {
      const __m512i p0 = _mm512_mul_epu32(x0, m0), p1 = _mm512_mul_epu32(x2, m1);
      x0 = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(p1, 32), x1), k0);
      x1 = p1;
      x2 = _mm512_xor_si512(_mm512_xor_si512(_mm512_srli_epi64(p0, 32), x3), k1);
      x3 = p0;
      k0 = _mm512_add_epi64(k0, w0);
      k1 = _mm512_add_epi64(k1, w1);
    }
    _mm512_storeu_si512(lanes.bits.data() + i, _mm512_or_si512(_mm512_slli_epi64(x1, 32), _mm512_and_si512(x0, low)));
  }
  return i;
}
#pragma GCC diagnostic pop

[[gnu::target("arch=x86-64-v3")]] std::size_t bits_avx2(CursorLanes& lanes, std::size_t count) noexcept {
  const __m256i m0 = _mm256_set1_epi64x(detail::kPhiloxM0), m1 = _mm256_set1_epi64x(detail::kPhiloxM1);
  const __m256i w0 = _mm256_set1_epi64x(detail::kPhiloxW0), w1 = _mm256_set1_epi64x(detail::kPhiloxW1);
  const __m256i low = _mm256_set1_epi64x(0xffffffff);
  std::size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    const __m256i counter = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes.counters.data() + i));
    const __m256i stream = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes.streams.data() + i));
    __m256i k0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(lanes.seeds.data() + i));
    __m256i k1 = _mm256_srli_epi64(k0, 32);
    __m256i x0 = counter, x1 = _mm256_srli_epi64(counter, 32), x2 = stream, x3 = _mm256_srli_epi64(stream, 32);
    for (int round = 0; round < 10; ++round) {
      const __m256i p0 = _mm256_mul_epu32(x0, m0), p1 = _mm256_mul_epu32(x2, m1);
      x0 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p1, 32), x1), k0);
      x1 = p1;
      x2 = _mm256_xor_si256(_mm256_xor_si256(_mm256_srli_epi64(p0, 32), x3), k1);
      x3 = p0;
      k0 = _mm256_add_epi64(k0, w0);
      k1 = _mm256_add_epi64(k1, w1);
    }
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(lanes.bits.data() + i),
                        _mm256_or_si256(_mm256_slli_epi64(x1, 32), _mm256_and_si256(x0, low)));
  }
  return i;
}
#endif

}  // namespace

void CursorLanes::draw_bits(std::size_t count, SimdLevel level) noexcept {
  std::size_t done = 0;
#ifdef EMBSCALE_X86_PHILOX
  if (level == SimdLevel::kAvx512) done = bits_avx512(*this, count);
  if (level == SimdLevel::kAvx2) done = bits_avx2(*this, count);
#endif
  (void)level;
  bits_portable(*this, done, count);  // the baseline, and the lanes past the last full register
}

void draw_uniforms(std::span<RngCursor> cursors, std::span<double> uniforms, SimdLevel level) {
  EMBSCALE_EXPECTS(cursors.size() == uniforms.size(), "draw_uniforms needs one uniform per cursor");
  CursorLanes lanes;
  for (std::size_t first = 0; first < cursors.size(); first += CursorLanes::kLanes) {
    const std::size_t count = std::min(CursorLanes::kLanes, cursors.size() - first);
    lanes.load(cursors.subspan(first, count));
    lanes.draw_bits(count, level);
    for (std::size_t i = 0; i < count; ++i) uniforms[first + i] = lanes.uniform(i);
    for (std::size_t i = 0; i < count; ++i) {
      RngCursor& cursor = cursors[first + i];
      cursor = RngCursor(cursor.rng(), cursor.counter() + 1);
    }
  }
}

}  // namespace embscale
