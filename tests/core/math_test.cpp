// Power sums, harmonic numbers and the Zipf pmf/cdf/tail against independent references: long-
// double sums term by term (up to 5 x 10^4 terms), closed forms (s = 0, the digamma expansion at
// s = 1, zeta(2) and zeta(3)), and the additivity of sums over split ranges (n up to 2^63 - 1).
#include "core/math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <numbers>

#include "core/error.hpp"

namespace embscale {
namespace {

constexpr std::int64_t kMaxN = std::numeric_limits<std::int64_t>::max();

// The reference: term by term in long double, smallest terms first, compensated.
long double plain_sum(std::int64_t first, std::int64_t last, double s) {
  long double sum = 0, carry = 0;
  for (std::int64_t i = last; i >= first; --i) {
    const long double term = std::pow(static_cast<long double>(i), -static_cast<long double>(s)) - carry;
    const long double next = sum + term;
    carry = (next - sum) - term;
    sum = next;
  }
  return sum;
}

TEST(PowerSum, MatchesATermByTermSumForEveryExponent) {
  for (const double s : {0.0, 0.5, 0.9, 0.99, 0.999999, 1.0, 1.000001, 1.01, 1.05, 1.1, 1.3, 2.0, 4.0, 12.0, 64.0})
    for (const std::int64_t first : {1, 2, 9, 50, 1000})
      for (const std::int64_t count : {1, 9, 10, 11, 19, 20, 21, 1000, 50001}) {
        const std::int64_t last = first + count - 1;
        const double want = static_cast<double>(plain_sum(first, last, s));
        EXPECT_NEAR(power_sum(first, last, s), want, 4e-15 * want)
            << "s " << s << ", [" << first << ", " << last << "]";
      }
}

TEST(GeneralizedHarmonic, MatchesClosedFormsAtAnyN) {
  EXPECT_DOUBLE_EQ(generalized_harmonic(1, 1.3), 1.0);
  EXPECT_DOUBLE_EQ(generalized_harmonic(4, 1.0), 1.0 + 0.5 + 1.0 / 3 + 0.25);
  EXPECT_DOUBLE_EQ(generalized_harmonic(1000, 0.0), 1000.0);
  EXPECT_NEAR(generalized_harmonic(1'000'000'000'000'000, 0.0), 1e15, 1e15 * 1e-14);
  // s = 1: H_n = ln n + gamma + 1/(2n) - 1/(12 n^2) + ..., the digamma expansion.
  for (const std::int64_t n : {std::int64_t{1'000'000}, std::int64_t{100'000'000'000}, kMaxN}) {
    const double x = static_cast<double>(n);
    const double want = std::log(x) + std::numbers::egamma + 1.0 / (2 * x) - 1.0 / (12 * x * x);
    EXPECT_NEAR(generalized_harmonic(n, 1.0), want, 1e-14 * want) << n;
  }
  // s = 2 and 3 converge to zeta(2) = pi^2 / 6 and zeta(3) (Apery's constant) with tails
  // ~ 1/n and 1/(2 n^2): gone in doubles at n = 2^63 - 1.
  EXPECT_NEAR(generalized_harmonic(kMaxN, 2.0), std::numbers::pi * std::numbers::pi / 6, 1e-15);
  EXPECT_NEAR(generalized_harmonic(kMaxN, 3.0), 1.2020569031595942854, 1e-15);
  // Continuous in s through s = 1 (the integral's expm1(t)/t guard).
  const double at_one = generalized_harmonic(kMaxN, 1.0);
  EXPECT_NEAR(generalized_harmonic(kMaxN, 1.0 + 1e-9), at_one, 1e-6);
  EXPECT_NEAR(generalized_harmonic(kMaxN, 1.0 - 1e-9), at_one, 1e-6);
  EXPECT_LT(generalized_harmonic(kMaxN, 1.0 + 1e-9), at_one);
  EXPECT_GT(generalized_harmonic(kMaxN, 1.0 - 1e-9), at_one);
}

TEST(PowerSum, SplitRangesAddUpAtHugeN) {
  for (const double s : {0.5, 0.99, 1.0, 1.05, 1.3})
    for (const std::int64_t n : {std::int64_t{100'000'000'000}, kMaxN})
      for (const std::int64_t k : {std::int64_t{1}, std::int64_t{15}, std::int64_t{1'000'000}, n / 3, n - 20}) {
        const double whole = power_sum(1, n, s);
        EXPECT_NEAR(power_sum(1, k, s) + power_sum(k + 1, n, s), whole, 1e-14 * whole) << s << " " << n << " " << k;
      }
}

TEST(ZipfPmf, SumsToOneAndFollowsThePowerLaw) {
  double total = 0;
  for (int k = 1; k <= 500; ++k) total += zipf_pmf(k, 500, 1.05);
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_NEAR(zipf_pmf(1, 500, 1.05) / zipf_pmf(10, 500, 1.05), std::pow(10.0, 1.05), 1e-9);
  EXPECT_THROW(zipf_pmf(0, 10, 1.0), Error);
  EXPECT_THROW(zipf_pmf(11, 10, 1.0), Error);
}

TEST(ZipfCdf, CdfAndTailAreComplementsAndTheTailStaysAccurateWhereItIsTiny) {
  const std::int64_t n = 100'000'000'000;  // 10^11 keys
  for (const double s : {0.0, 0.5, 0.99, 1.0, 1.05, 1.3, 2.0}) {
    EXPECT_EQ(zipf_cdf(0, n, s), 0.0);
    EXPECT_EQ(zipf_cdf(n, n, s), 1.0);
    EXPECT_EQ(zipf_tail(n, n, s), 0.0);
    double previous = 0.0;
    for (const std::int64_t k :
         {std::int64_t{1}, std::int64_t{10}, std::int64_t{1000}, std::int64_t{1'000'000}, n / 2}) {
      const double cdf = zipf_cdf(k, n, s);
      EXPECT_GT(cdf, previous);
      EXPECT_NEAR(cdf + zipf_tail(k, n, s), 1.0, 1e-14);
      previous = cdf;
    }
    EXPECT_NEAR(zipf_cdf(1, n, s), zipf_pmf(1, n, s), 1e-16);
  }
  // The last rank's mass, where 1 - cdf has no digits left: the tail of k = n - 1 is pmf(n).
  for (const double s : {0.5, 1.0, 2.0})
    EXPECT_NEAR(zipf_tail(n - 1, n, s), zipf_pmf(n, n, s), 1e-12 * zipf_pmf(n, n, s)) << s;
  // Uniform: the tail is exactly the share of the ranks above k.
  EXPECT_NEAR(zipf_tail(n / 4, n, 0.0), 0.75, 1e-14);
}

TEST(PowerSum, RefusesWhatItCannotSum) {
  EXPECT_THROW(power_sum(0, 5, 1.0), Error);
  EXPECT_THROW(power_sum(6, 5, 1.0), Error);
  EXPECT_THROW(power_sum(1, 5, -0.5), Error);
  EXPECT_THROW(power_sum(1, 5, std::numeric_limits<double>::infinity()), Error);
  EXPECT_THROW(generalized_harmonic(0, 1.0), Error);
  EXPECT_THROW(zipf_cdf(11, 10, 1.0), Error);
  EXPECT_THROW(zipf_tail(-1, 10, 1.0), Error);
}

}  // namespace
}  // namespace embscale
