// vexp, vlog and vlog1p against long-double libm (64-bit significands: 11 bits beyond a
// double, so the reference's own error is ~2^-11 ulp): the error in ulps of the exact result,
// on random arguments over each domain (fixed seeds), at the reduction boundaries and at the
// clamps. The bound asserted is one ulp, which fdlibm-style evaluation keeps.
#include "core/vector_math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <string>

namespace embscale::vmath {
namespace {

// |got - want| in units of the last place of want, as a double.
double ulp_error(double got, long double want) {
  const double want_d = static_cast<double>(want);
  const double ulp = std::nextafter(std::abs(want_d), std::numeric_limits<double>::infinity()) - std::abs(want_d);
  return static_cast<double>(std::abs(static_cast<long double>(got) - want) / ulp);
}

struct Worst {
  double ulps = 0;
  double at = 0;
  void see(double error, double x) {
    if (error > ulps) ulps = error, at = x;
  }
  std::string where() const { return "worst " + std::to_string(ulps) + " ulp at " + std::to_string(at); }
};

TEST(VectorMath, ExpWithinOneUlpOverItsDomain) {
  std::mt19937_64 gen(11);
  for (const auto& [low, high] :
       {std::pair{-708.0, 709.0}, std::pair{-1.0, 1.0}, std::pair{-1e-6, 1e-6}, std::pair{0.0, 45.0}}) {
    std::uniform_real_distribution<double> arg(low, high);
    Worst worst;
    for (int i = 0; i < 200'000; ++i) {
      const double x = arg(gen);
      worst.see(ulp_error(vexp(x), std::exp(static_cast<long double>(x))), x);
    }
    EXPECT_LT(worst.ulps, 1.0) << "[" << low << ", " << high << "]: " << worst.where();
    std::printf("vexp on [%g, %g]: %s\n", low, high, worst.where().c_str());
  }
  EXPECT_EQ(vexp(0.0), 1.0);
  // Reduction boundaries: x near k ln2 and (k + 1/2) ln2.
  for (int k = -1000; k <= 1000; k += 7)
    for (const double half : {0.0, 0.5})
      for (const double nudge : {-1e-12, 0.0, 1e-12}) {
        const double x = (k + half) * 0.6931471805599453 + nudge;
        EXPECT_LT(ulp_error(vexp(x), std::exp(static_cast<long double>(x))), 1.0) << x;
      }
}

TEST(VectorMath, ExpClampsOutsideItsDomain) {
  EXPECT_EQ(vexp(1e6), vexp(709.0));
  EXPECT_EQ(vexp(-1e6), vexp(-708.0));
  EXPECT_TRUE(std::isfinite(vexp(710.0)));
  EXPECT_GT(vexp(-710.0), 0.0);
}

TEST(VectorMath, LogWithinOneUlpOverItsDomain) {
  std::mt19937_64 gen(12);
  Worst worst;
  // Log-uniform over the whole normal range, and uniform near 1 where ln x is small.
  std::uniform_real_distribution<double> exponent(-1022.0, 1023.0);
  for (int i = 0; i < 200'000; ++i) {
    const double x = std::exp2(exponent(gen));
    worst.see(ulp_error(vlog(x), std::log(static_cast<long double>(x))), x);
  }
  std::uniform_real_distribution<double> near_one(0.5, 2.0);
  for (int i = 0; i < 200'000; ++i) {
    const double x = near_one(gen);
    if (x == 1.0) continue;
    worst.see(ulp_error(vlog(x), std::log(static_cast<long double>(x))), x);
  }
  EXPECT_LT(worst.ulps, 1.0) << worst.where();
  std::printf("vlog: %s\n", worst.where().c_str());
  EXPECT_EQ(vlog(1.0), 0.0);
  for (int k = -1022; k <= 1023; ++k) {
    const double x = std::ldexp(1.0, k);
    EXPECT_LT(ulp_error(vlog(x), std::log(static_cast<long double>(x))), 1.0) << "2^" << k;
    for (const double m : {0.7071067811865475, 0.7071067811865476, 1.414213562373095, 1.4142135623730951}) {
      const double y = std::ldexp(m, k);  // the m in [sqrt(1/2), sqrt(2)) boundary
      if (y < 0x1.0p-1022 || !std::isfinite(y)) continue;
      EXPECT_LT(ulp_error(vlog(y), std::log(static_cast<long double>(y))), 1.0) << y;
    }
  }
  EXPECT_EQ(vlog(0.0), vlog(0x1.0p-1022));  // clamped, not -inf
}

TEST(VectorMath, Log1pWithinOneUlpOverItsDomain) {
  std::mt19937_64 gen(13);
  Worst worst;
  const auto check = [&](double t) { worst.see(ulp_error(vlog1p(t), std::log1p(static_cast<long double>(t))), t); };
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  std::uniform_real_distribution<double> exponent(-60.0, 60.0);
  for (int i = 0; i < 200'000; ++i) {
    check(unit(gen));
    const double magnitude = std::exp2(exponent(gen));
    check(magnitude);
    if (magnitude < 1.0) check(-magnitude);
    check(-1.0 + std::exp2(-1.0 - 52.0 * std::uniform_real_distribution<double>(0.0, 1.0)(gen)));  // near -1
  }
  EXPECT_LT(worst.ulps, 1.0) << worst.where();
  std::printf("vlog1p: %s\n", worst.where().c_str());
  EXPECT_EQ(vlog1p(0.0), 0.0);
  EXPECT_EQ(vlog1p(1e-300), 1e-300);
  EXPECT_EQ(vlog1p(-1e-300), -1e-300);
  EXPECT_TRUE(std::isfinite(vlog1p(-1.0)));  // clamped
}

// The point of the header: a loop over them vectorizes and gives the same bits as one call.
TEST(VectorMath, ArrayLoopGivesTheScalarBits) {
  std::mt19937_64 gen(14);
  std::uniform_real_distribution<double> arg(-5.0, 40.0);
  constexpr int kCount = 4099;
  std::vector<double> in(kCount), out(kCount);
  for (auto& x : in) x = arg(gen);
  for (int i = 0; i < kCount; ++i) out[i] = vexp(vlog1p(in[i] < -0.9 ? -0.9 : in[i]));
  for (int i = 0; i < kCount; ++i) {
    volatile double x = in[i];  // one value at a time, not through the loop's SIMD code
    const double clamped = x < -0.9 ? -0.9 : x;
    ASSERT_EQ(std::bit_cast<std::uint64_t>(out[i]), std::bit_cast<std::uint64_t>(vexp(vlog1p(clamped)))) << i;
  }
}

}  // namespace
}  // namespace embscale::vmath
