// Half against the compiler's _Float16 (GCC 12 on x86-64: IEEE binary16 with round-to-nearest-even
// conversions in libgcc or F16C), BFloat16 against a brute-force nearest-value search in double.
#include "core/half_float.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

namespace embscale {
namespace {

std::uint32_t bits_of(float f) { return std::bit_cast<std::uint32_t>(f); }
bool quiet_nan(float f) { return std::isnan(f) && (bits_of(f) & 0x00400000u) != 0; }

// Floats where conversions go wrong: zeros, infinities, NaNs, the limits of half and bfloat16,
// the subnormal boundaries and the exact ties around them.
std::vector<float> edge_floats() {
  std::vector<float> v = {0.0f,
                          -0.0f,
                          1.0f,
                          -1.0f,
                          std::numeric_limits<float>::infinity(),
                          -std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN(),
                          -std::numeric_limits<float>::quiet_NaN(),
                          std::numeric_limits<float>::signaling_NaN(),
                          std::numeric_limits<float>::max(),
                          std::numeric_limits<float>::min(),
                          std::numeric_limits<float>::denorm_min(),
                          65504.0f,
                          65519.99f,
                          65520.0f,
                          65536.0f,
                          0x1p-14f,
                          0x1p-24f,
                          0x1p-25f,
                          0x1.000002p-25f,
                          0x1.8p-24f,
                          0x1.8p-23f,
                          0x1.ffcp-15f,
                          0x1.ffep-15f,
                          0x1.0008p0f,
                          0x1.0018p0f,
                          0x1.00180p0f,
                          0x1.ff8p127f,
                          0x1.fep127f,
                          0x1.010000p0f,
                          0x1.030000p0f,
                          0x1.018000p0f};
  const std::size_t n = v.size();
  for (std::size_t i = 0; i < n; ++i) v.push_back(-v[i]);
  for (std::uint32_t b : {0x7f800001u, 0x7fc00001u, 0xffbfffffu, 0x00000001u, 0x007fffffu, 0x33000000u, 0x33000001u,
                          0x32ffffffu, 0x387fe000u, 0x387ff000u, 0x477fe000u, 0x477fefffu})
    v.push_back(std::bit_cast<float>(b));
  return v;
}

#if defined(__FLT16_MAX__)

TEST(HalfFloat, ToFloatMatchesFloat16OnEveryBitPattern) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const auto h = static_cast<std::uint16_t>(b);
    const float expected = static_cast<float>(std::bit_cast<_Float16>(h));
    const float got = to_float(Half{h});
    if (std::isnan(expected)) {
      EXPECT_TRUE(quiet_nan(got)) << std::hex << b;
      EXPECT_EQ(std::signbit(got), std::signbit(expected)) << std::hex << b;
    } else {
      ASSERT_EQ(bits_of(got), bits_of(expected)) << "half 0x" << std::hex << b;
    }
  }
}

void expect_half_of(float f) {
  const auto expected = std::bit_cast<std::uint16_t>(static_cast<_Float16>(f));
  const Half got = to_half(f);
  if (std::isnan(f)) {
    EXPECT_TRUE(quiet_nan(to_float(got))) << std::hex << bits_of(f);
    EXPECT_EQ(got.bits & 0x8000u, expected & 0x8000u) << std::hex << bits_of(f);
  } else {
    ASSERT_EQ(got.bits, expected) << "float 0x" << std::hex << bits_of(f) << " (" << f << ")";
  }
}

TEST(HalfFloat, ToHalfMatchesFloat16OnEdgeCases) {
  for (const float f : edge_floats()) expect_half_of(f);
}

TEST(HalfFloat, ToHalfMatchesFloat16OnRandomFloatsAndTies) {
  std::mt19937_64 rng(16);
  for (int i = 0; i < 1'000'000; ++i) expect_half_of(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  // Floats within half's range and just below it (exponents 2^-26 .. 2^16), where rounding matters.
  std::uniform_int_distribution<std::uint32_t> exponent(101, 143), mantissa(0, 0x7fffff);
  for (int i = 0; i < 2'000'000; ++i)
    expect_half_of(
        std::bit_cast<float>((static_cast<std::uint32_t>(rng() & 1) << 31) | (exponent(rng) << 23) | mantissa(rng)));
  // Exact ties and their neighbours: midpoints between consecutive halves (subnormal ones too).
  for (std::uint32_t b = 0; b < 0x7bffu; ++b) {
    const float lo = to_float(Half{static_cast<std::uint16_t>(b)});
    const float hi = to_float(Half{static_cast<std::uint16_t>(b + 1)});
    const float mid = lo + (hi - lo) / 2;  // exact: float has 13 more mantissa bits than half
    for (const float f : {mid, std::nextafter(mid, 0.0f), std::nextafter(mid, 1e9f)}) {
      expect_half_of(f);
      expect_half_of(-f);
    }
  }
}

#else

TEST(HalfFloat, NeedsFloat16) { GTEST_SKIP() << "this compiler has no _Float16 to check Half against"; }

#endif

// The bfloat16 nearest to f, ties to even, by search: the two candidates around f's truncation
// compared in double. Past the largest bfloat16 the next value up counts as 2^128 (IEEE's
// unbounded exponent rule), so overflow rounds to infinity exactly where it should.
std::uint16_t reference_bfloat16(float f) {
  const std::uint32_t x = bits_of(f);
  const auto low = static_cast<std::uint16_t>(x >> 16);
  const auto high = static_cast<std::uint16_t>(low + 1);
  const auto value = [](std::uint16_t b) {
    if ((b & 0x7fffu) == 0x7f80u) return std::copysign(std::ldexp(1.0, 128), (b & 0x8000u) ? -1.0 : 1.0);
    return static_cast<double>(std::bit_cast<float>(static_cast<std::uint32_t>(b) << 16));
  };
  if ((x & 0xffffu) == 0) return low;
  const double d_low = std::fabs(static_cast<double>(f) - value(low));
  const double d_high = std::fabs(static_cast<double>(f) - value(high));
  if (d_low != d_high) return d_low < d_high ? low : high;
  return (low & 1u) == 0 ? low : high;
}

TEST(BFloat16, EveryBitPatternRoundTrips) {
  for (std::uint32_t b = 0; b <= 0xffffu; ++b) {
    const BFloat16 in{static_cast<std::uint16_t>(b)};
    const float f = to_float(in);
    EXPECT_EQ(bits_of(f) >> 16, (b & 0x7fffu) > 0x7f80u ? (b | 0x0040u) : b) << std::hex << b;
    if (std::isnan(f)) {
      EXPECT_TRUE(quiet_nan(f));
      EXPECT_EQ(to_bfloat16(f).bits, b | 0x0040u) << std::hex << b;
    } else {
      ASSERT_EQ(to_bfloat16(f).bits, b) << std::hex << b;
    }
  }
}

TEST(BFloat16, ToBFloat16MatchesNearestEvenSearch) {
  const auto check = [](float f) {
    if (std::isnan(f)) {
      EXPECT_TRUE(quiet_nan(to_float(to_bfloat16(f))));
      EXPECT_EQ(to_bfloat16(f).bits & 0x8000u, (bits_of(f) >> 16) & 0x8000u);
      return;
    }
    ASSERT_EQ(to_bfloat16(f).bits, reference_bfloat16(f)) << "float 0x" << std::hex << bits_of(f);
  };
  for (const float f : edge_floats()) check(f);
  std::mt19937_64 rng(17);
  for (int i = 0; i < 1'000'000; ++i) check(std::bit_cast<float>(static_cast<std::uint32_t>(rng())));
  // Every tie (low half exactly 0x8000) of every bfloat16, and its two neighbours.
  for (std::uint32_t b = 0; b <= 0xffffu; ++b)
    for (const std::uint32_t low : {0x7fffu, 0x8000u, 0x8001u}) check(std::bit_cast<float>((b << 16) | low));
}

}  // namespace
}  // namespace embscale
