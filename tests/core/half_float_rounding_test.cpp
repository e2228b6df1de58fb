// The 16-bit codec against independent references: every half value round-trips exactly; float to
// half agrees with the compiler's _Float16 (IEEE round to nearest even) on random and edge-case
// floats; bf16 agrees with rounding the significand to 8 bits in double.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "core/half_float.hpp"

namespace embscale {
namespace {

TEST(HalfFloatRounding, EveryHalfRoundTrips) {
  for (std::uint32_t h = 0; h < 65536; ++h) {
    const float f = to_float(Half{static_cast<std::uint16_t>(h)});
    if (std::isnan(f)) continue;
    ASSERT_EQ(to_half(f).bits, h) << "half " << h << " = " << f;
    ASSERT_EQ(static_cast<float>(std::bit_cast<_Float16>(static_cast<std::uint16_t>(h))), f) << h;
  }
}

TEST(HalfFloatRounding, FloatToHalfRoundsLikeTheCompiler) {
  std::mt19937 rng(7);
  std::vector<float> cases{0.0f,
                           -0.0f,
                           65504.0f,
                           65519.99f,
                           65520.0f,
                           1e9f,
                           -1e9f,
                           5.96e-8f,
                           2.98e-8f,
                           2.99e-8f,
                           6.1e-5f,
                           6.103515625e-05f,
                           std::numeric_limits<float>::infinity(),
                           std::numeric_limits<float>::denorm_min(),
                           1.0f + 1.0f / 2048,
                           1.0f + 3.0f / 2048};
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) cases.push_back(std::bit_cast<float>(bits(rng)));
  std::uniform_real_distribution<float> small(-70000.0f, 70000.0f);
  for (int i = 0; i < 200000; ++i) cases.push_back(small(rng) * (i % 2 ? 1.0f : 1e-6f));
  for (const float f : cases) {
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_half(f))));
      continue;
    }
    ASSERT_EQ(to_half(f).bits, std::bit_cast<std::uint16_t>(static_cast<_Float16>(f))) << f;
  }
}

TEST(HalfFloatRounding, FloatToBf16RoundsToNearestEven) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    const float f = std::bit_cast<float>(bits(rng));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_bfloat16(f))));
      continue;
    }
    if (!std::isnormal(f)) continue;
    int e = 0;
    const double m = std::frexp(static_cast<double>(f), &e);
    const double want = std::ldexp(std::nearbyint(std::ldexp(m, 8)), e - 8);
    ASSERT_EQ(static_cast<double>(to_float(to_bfloat16(f))),
              std::isfinite(static_cast<float>(want)) ? want : (f > 0 ? INFINITY : -INFINITY))
        << f;
  }
  EXPECT_EQ(to_float(to_bfloat16(1.0f)), 1.0f);
  EXPECT_EQ(to_float(to_bfloat16(1.0f + 1.0f / 256)), 1.0f);               // tie: to even
  EXPECT_EQ(to_float(to_bfloat16(1.0f + 3.0f / 256)), 1.0f + 4.0f / 256);  // tie: to even (up)
}

}  // namespace
}  // namespace embscale
