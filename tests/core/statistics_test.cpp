#include "core/statistics.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace embscale {
namespace {

// U of b: pairs (x in a, y in b) with y > x, ties counting 1/2 (the definition itself).
double u_by_pairs(const std::vector<double>& a, const std::vector<double>& b) {
  double u = 0;
  for (double x : a)
    for (double y : b) u += y > x ? 1.0 : (y == x ? 0.5 : 0.0);
  return u;
}

// Brute-force oracle: every way to split the pooled values into groups of |a| and |b|,
// equally likely under the null; P(U >= observed).
double permutation_p_greater(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> pooled(a);
  pooled.insert(pooled.end(), b.begin(), b.end());
  std::vector<int> in_b(pooled.size(), 0);
  std::fill(in_b.end() - static_cast<long>(b.size()), in_b.end(), 1);
  const double observed = u_by_pairs(a, b);
  int total = 0, at_least = 0;
  do {
    std::vector<double> ga, gb;
    for (std::size_t i = 0; i < pooled.size(); ++i) (in_b[i] ? gb : ga).push_back(pooled[i]);
    ++total;
    at_least += u_by_pairs(ga, gb) >= observed - 1e-12;
  } while (std::next_permutation(in_b.begin(), in_b.end()));
  return static_cast<double>(at_least) / total;
}

TEST(MannWhitneyU, ExactPValuesMatchTheBruteForcePermutationOracle) {
  const CounterRng rng(31, 0);
  std::uint64_t counter = 0;
  for (std::size_t na : {1, 3, 5, 6})
    for (std::size_t nb : {1, 4, 6}) {
      std::vector<double> a(na), b(nb);
      for (auto& x : a) x = rng.uniform(counter++);
      for (auto& y : b) y = rng.uniform(counter++) + 0.3;  // b shifted up
      const auto r = mann_whitney_u(a, b, Alternative::kGreater);
      EXPECT_TRUE(r.exact);
      EXPECT_DOUBLE_EQ(r.u, u_by_pairs(a, b));
      EXPECT_NEAR(r.p_value, permutation_p_greater(a, b), 1e-12) << na << " vs " << nb;
      const auto less = mann_whitney_u(b, a, Alternative::kLess);  // the mirror question
      EXPECT_NEAR(less.p_value, r.p_value, 1e-12);
    }
}

TEST(MannWhitneyU, KnownSmallExample) {
  // b = {3.1, 4.2, 5.5, 6.1, 7.7} over a = {1, 2, 2.9, 4}: U = 19 of 20, and only 2 of the 126
  // splits reach it (SciPy's exact method agrees: 0.015873...).
  const std::vector<double> a{1.0, 2.0, 2.9, 4.0}, b{3.1, 4.2, 5.5, 6.1, 7.7};
  const auto r = mann_whitney_u(a, b, Alternative::kGreater);
  EXPECT_EQ(r.u, 19.0);
  EXPECT_NEAR(r.p_value, 2.0 / 126.0, 1e-15);
  EXPECT_NEAR(mann_whitney_u(a, b, Alternative::kTwoSided).p_value, 4.0 / 126.0, 1e-15);
}

// Reference values from an independent implementation: SciPy's mannwhitneyu(b, a,
// method="asymptotic", use_continuity=True).
TEST(MannWhitneyU, NormalApproximationMatchesSciPy) {
  std::vector<double> a{1.0,  2.5,  3.1,  4.7,  5.2,  6.0,  7.3,  8.8,  9.9,  10.4, 11.1, 12.6, 13.0, 14.2, 15.5,
                        16.1, 17.9, 18.2, 19.0, 20.5, 21.3, 22.8, 23.1, 24.6, 25.0, 26.7, 27.2, 28.9, 29.3, 30.0};
  std::vector<double> b(a);
  for (auto& y : b) y += 4.05;
  const auto greater = mann_whitney_u(a, b, Alternative::kGreater);
  EXPECT_FALSE(greater.exact);
  EXPECT_EQ(greater.u, 561.0);
  EXPECT_NEAR(greater.p_value, 0.05116313411366484, 1e-12);
  EXPECT_NEAR(mann_whitney_u(a, b, Alternative::kLess).p_value, 0.9503711958800871, 1e-12);
  EXPECT_NEAR(mann_whitney_u(a, b, Alternative::kTwoSided).p_value, 0.10232626822732968, 1e-12);

  const std::vector<double> ta{1, 2, 2, 3, 3, 3, 4, 5}, tb{2, 3, 4, 4, 5, 6, 6, 7, 7};  // ties
  const auto tied = mann_whitney_u(ta, tb, Alternative::kGreater);
  EXPECT_FALSE(tied.exact);
  EXPECT_EQ(tied.u, 59.0);
  EXPECT_NEAR(tied.p_value, 0.01413668390698365, 1e-12);
  EXPECT_NEAR(mann_whitney_u(ta, tb, Alternative::kTwoSided).p_value, 0.0282733678139673, 1e-12);
}

TEST(MannWhitneyU, IdenticalSamplesGiveNoEvidence) {
  const std::vector<double> same(10, 2.0);
  EXPECT_EQ(mann_whitney_u(same, same, Alternative::kTwoSided).p_value, 1.0);
  EXPECT_THROW(mann_whitney_u({}, same, Alternative::kGreater), Error);
}

TEST(BlockMeans, SkipWarmUpAndDropTheRemainder) {
  const std::vector<double> s{100, 100, 1, 2, 3, 4, 5, 6, 7};
  EXPECT_EQ(block_means(s, 2, 3), (std::vector<double>{1.5, 3.5, 5.5}));  // 7 dropped
  EXPECT_EQ(block_means(s, 0, 1), (std::vector<double>{228.0 / 9}));
  EXPECT_THROW(block_means(s, 8, 2), InputError);
}

// Holm's procedure as its definition states it (Holm 1979): walk the p-values in ascending order,
// reject while p(k) <= alpha / (m - k), stop at the first that fails. The oracle for the adjusted
// p-values: a hypothesis is rejected at level alpha exactly when its adjusted p-value is <= alpha.
std::vector<bool> holm_rejects(const std::vector<double>& p, double alpha) {
  std::vector<std::size_t> order(p.size());
  for (std::size_t i = 0; i < p.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](auto l, auto r) { return p[l] < p[r]; });
  std::vector<bool> reject(p.size(), false);
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (p[order[k]] > alpha / static_cast<double>(p.size() - k)) break;
    reject[order[k]] = true;
  }
  return reject;
}

TEST(MannWhitneyU, SmallestPValueIsOneOverTheArrangementsAndIsReached) {
  EXPECT_DOUBLE_EQ(mann_whitney_smallest_p(3, 3), 1.0 / 20.0);
  EXPECT_DOUBLE_EQ(mann_whitney_smallest_p(5, 5), 1.0 / 252.0);
  EXPECT_DOUBLE_EQ(mann_whitney_smallest_p(10, 10), 1.0 / 184756.0);
  EXPECT_DOUBLE_EQ(mann_whitney_smallest_p(2, 7), 1.0 / 36.0);
  // Complete separation reaches it.
  const std::vector<double> a{1, 2, 3, 4}, b{5, 6, 7};
  EXPECT_NEAR(mann_whitney_u(a, b, Alternative::kGreater).p_value, mann_whitney_smallest_p(4, 3), 1e-15);
}

TEST(HolmAdjusted, HandWorkedExample) {
  // Sorted: 0.005 (x4 = 0.02), 0.01 (x3 = 0.03), 0.03 (x2 = 0.06), 0.04 (x1 = 0.04 -> stays 0.06).
  const std::vector<double> p{0.01, 0.04, 0.03, 0.005};
  const auto adjusted = holm_adjusted(p);
  const std::vector<double> expected{0.03, 0.06, 0.06, 0.02};
  for (std::size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(adjusted[i], expected[i], 1e-15) << i;
  EXPECT_TRUE(holm_adjusted(std::vector<double>{}).empty());
  EXPECT_EQ(holm_adjusted(std::vector<double>{0.7})[0], 0.7);       // one test: no correction
  EXPECT_EQ(holm_adjusted(std::vector<double>{0.6, 0.9})[0], 1.0);  // capped at 1
}

TEST(HolmAdjusted, RejectsExactlyWhatTheStepDownProcedureRejects) {
  const CounterRng rng(7, 0);
  std::uint64_t draw = 0;
  for (int trial = 0; trial < 2000; ++trial) {
    const std::size_t m = 1 + trial % 12;
    std::vector<double> p(m);
    for (auto& x : p) x = 0.1 * rng.uniform(draw++);  // many near the thresholds
    const auto adjusted = holm_adjusted(p);
    for (const double alpha : {0.01, 0.05}) {
      const auto reject = holm_rejects(p, alpha);
      for (std::size_t i = 0; i < m; ++i) ASSERT_EQ(adjusted[i] <= alpha, reject[i]) << "trial " << trial << " i " << i;
    }
  }
}

TEST(HolmAdjusted, FamilyWiseErrorStaysBelowAlphaUnderTheNull) {
  // Eight true null hypotheses with uniform p-values: the chance of any rejection at 0.05 is
  // 1 - (1 - 0.05/8)^8 = 0.0489 for independent tests. 20000 trials: sd of the rate 0.0015.
  const CounterRng rng(11, 0);
  std::uint64_t draw = 0;
  int any = 0;
  const int trials = 20000;
  for (int t = 0; t < trials; ++t) {
    std::vector<double> p(8);
    for (auto& x : p) x = rng.uniform(draw++);
    const auto adjusted = holm_adjusted(p);
    any += *std::min_element(adjusted.begin(), adjusted.end()) < 0.05;
  }
  const double rate = static_cast<double>(any) / trials;
  std::printf("family-wise false rejections: %.4f (exact for independent tests: 0.0489)\n", rate);
  EXPECT_NEAR(rate, 1.0 - std::pow(1.0 - 0.05 / 8, 8), 0.005);
}

// Quantiles interpolate between order statistics at q (n - 1), by hand: {4, 1, 3, 2} sorted is
// 1 2 3 4; q = 0.5 sits halfway between 2 and 3, q = 0.25 at 1.75, q = 0.95 at 3.85.
// The sign test against enumeration: under the null every one of the 2^n sign patterns of the
// differing pairs is equally likely, so the p-value is the share of patterns with at least (at
// most) as many pairs b > a, counted one by one. Ties are dropped first.
TEST(SignTest, PValuesAreTheShareOfSignPatternsAtLeastAsExtreme) {
  const CounterRng rng(41, 0);
  for (std::uint64_t trial = 0; trial < 60; ++trial) {
    const std::size_t n = 1 + trial % 12;
    std::vector<double> a(n), b(n);
    std::size_t differing = 0, greater = 0;
    for (std::size_t i = 0; i < n; ++i) {
      a[i] = rng.uniform(trial * 100 + i);
      const double u = rng.uniform(trial * 100 + 50 + i);
      b[i] = u < 0.2 ? a[i] : a[i] + (u < 0.6 ? 0.1 : -0.1);  // some ties, the rest either way
      if (b[i] != a[i]) ++differing, greater += b[i] > a[i] ? 1 : 0;
    }
    double at_least = 0, at_most = 0;
    for (std::uint64_t pattern = 0; pattern < (std::uint64_t{1} << differing); ++pattern) {
      const auto ups = static_cast<std::size_t>(__builtin_popcountll(pattern));
      at_least += ups >= greater ? 1 : 0;
      at_most += ups <= greater ? 1 : 0;
    }
    const double patterns = std::ldexp(1.0, static_cast<int>(differing));
    const auto up = sign_test(a, b, Alternative::kGreater), down = sign_test(a, b, Alternative::kLess);
    EXPECT_EQ(up.pairs, differing);
    EXPECT_EQ(up.greater, greater);
    EXPECT_NEAR(up.p_value, differing == 0 ? 1.0 : at_least / patterns, 1e-12) << "trial " << trial;
    EXPECT_NEAR(down.p_value, differing == 0 ? 1.0 : at_most / patterns, 1e-12) << "trial " << trial;
    EXPECT_NEAR(sign_test(a, b, Alternative::kTwoSided).p_value,
                differing == 0 ? 1.0 : std::min(1.0, 2 * std::min(at_least, at_most) / patterns), 1e-12);
  }
  // Every pair one way: 2^-n, the smallest p-value n pairs can give; all tied: no evidence.
  const std::vector<double> low(10, 1.0), high(10, 2.0);
  EXPECT_DOUBLE_EQ(sign_test(low, high, Alternative::kGreater).p_value, std::ldexp(1.0, -10));
  EXPECT_DOUBLE_EQ(sign_test(low, low, Alternative::kLess).p_value, 1.0);
  EXPECT_THROW(sign_test(low, std::vector<double>(3, 1.0), Alternative::kLess), Error);
}

TEST(Quantile, InterpolatesBetweenOrderStatistics) {
  const std::vector<double> v{4.0, 1.0, 3.0, 2.0};
  EXPECT_DOUBLE_EQ(median(v), 2.5);
  EXPECT_DOUBLE_EQ(quantile(v, 0.25), 1.75);
  EXPECT_DOUBLE_EQ(quantile(v, 0.95), 3.85);
  EXPECT_DOUBLE_EQ(quantile(v, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(quantile(v, 1.0), 4.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{7.0}), 7.0);
  EXPECT_DOUBLE_EQ(median(std::vector<double>{}), 0.0);
}

}  // namespace
}  // namespace embscale
