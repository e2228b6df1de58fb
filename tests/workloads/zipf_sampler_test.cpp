#include "workloads/zipf_sampler.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "core/math.hpp"
#include "tests/workloads/goodness_of_fit.hpp"

namespace embscale::workloads {
namespace {

// Pearson's chi-square statistic of `samples` draws against the exact pmf (the oracle in
// core/math), over all n ranks (n small enough that every expected count is >= 5).
double chi_square(std::int64_t n, double s, int samples, std::uint64_t seed) {
  const ZipfSampler sampler(n, s);
  std::vector<int> counts(static_cast<std::size_t>(n) + 1, 0);
  RngCursor rng(CounterRng(seed, 0));
  for (int i = 0; i < samples; ++i) {
    const auto k = sampler(rng);
    EXPECT_GE(k, 1);
    EXPECT_LE(k, n);
    ++counts[static_cast<std::size_t>(k)];
  }
  double chi2 = 0;
  const double h = generalized_harmonic(n, s);
  for (std::int64_t k = 1; k <= n; ++k) {
    const double expected = samples * std::pow(static_cast<double>(k), -s) / h;
    const double diff = counts[static_cast<std::size_t>(k)] - expected;
    chi2 += diff * diff / expected;
  }
  return chi2;
}

// 99 degrees of freedom: the 0.999 quantile of chi-square(99) is 148.2. Fixed seeds make the
// outcome deterministic; the threshold says the sampler is right, not that it is lucky.
TEST(ZipfSampler, MatchesTheExactPmfAcrossExponents) {
  for (const double s : {0.0, 0.5, 0.99, 1.0, 1.05, 1.5}) {
    EXPECT_LT(chi_square(100, s, 200000, 11), 148.2) << "exponent " << s;
  }
}

// Pearson's chi-square over bins of ranks, each expecting at least kMinExpected draws (single
// ranks at the head, then ranges whose mass comes from core/math's power sums), against the
// 0.999 quantile of chi-square(bins - 1) (Wilson-Hilferty). For vocabularies too large for a
// count per rank.
bool binned_chi_square_passes(std::int64_t n, double s, int samples, std::uint64_t seed, std::string& report) {
  constexpr double kMinExpected = 20.0;
  const double h = generalized_harmonic(n, s);
  std::vector<std::int64_t> starts;  // bin b holds ranks [starts[b], starts[b + 1])
  std::vector<double> expected;
  for (std::int64_t start = 1; start <= n;) {
    std::int64_t width = 1;
    while (start + width - 1 < n && samples * power_sum(start, start + width - 1, s) / h < kMinExpected)
      width = std::min(2 * width, n - start + 1);
    starts.push_back(start);
    expected.push_back(samples * power_sum(start, start + width - 1, s) / h);
    start += width;
  }
  if (expected.size() > 1 && expected.back() < kMinExpected) {  // fold a thin last bin into the one before
    expected[expected.size() - 2] += expected.back();
    expected.pop_back();
    starts.pop_back();
  }
  const ZipfSampler sampler(n, s);
  std::vector<int> counts(expected.size(), 0);
  RngCursor rng(CounterRng(seed, 0));
  for (int i = 0; i < samples; ++i) {
    const auto k = sampler(rng);
    if (k < 1 || k > n) {
      report = "rank " + std::to_string(k) + " outside [1, n]";
      return false;
    }
    ++counts[static_cast<std::size_t>(std::upper_bound(starts.begin(), starts.end(), k) - starts.begin() - 1)];
  }
  double chi2 = 0;
  for (std::size_t b = 0; b < expected.size(); ++b)
    chi2 += (counts[b] - expected[b]) * (counts[b] - expected[b]) / expected[b];
  const double quantile = testing::chi_square_quantile_999(static_cast<double>(expected.size() - 1));
  report = "chi2 " + std::to_string(chi2) + " over " + std::to_string(expected.size()) + " bins, 0.999 quantile " +
           std::to_string(quantile);
  return chi2 < quantile;
}

TEST(ZipfSampler, MatchesTheExactPmfInBinsUpToAMillionKeys) {
  for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{1'000'000}})
    for (const double s : {0.0, 0.5, 0.99, 1.0, 1.05, 1.3, 2.0}) {
      std::string report;
      EXPECT_TRUE(binned_chi_square_passes(n, s, 300000, 17, report)) << "n " << n << ", s " << s << ": " << report;
    }
}

// The share of draws at or below rank k against the exact cdf (within 5 standard errors of a
// binomial proportion), at vocabularies where a count per rank is out of the question.
void expect_cdf_matches(std::int64_t n, double s, const std::vector<std::int64_t>& ranks, int samples) {
  const ZipfSampler sampler(n, s);
  std::vector<int> at_or_below(ranks.size(), 0);
  RngCursor rng(CounterRng(23, static_cast<std::uint64_t>(s * 1000)));
  for (int i = 0; i < samples; ++i) {
    const auto k = sampler(rng);
    ASSERT_GE(k, 1);
    ASSERT_LE(k, n);
    for (std::size_t r = 0; r < ranks.size(); ++r) at_or_below[r] += k <= ranks[r];
  }
  for (std::size_t r = 0; r < ranks.size(); ++r) {
    const double p = zipf_cdf(ranks[r], n, s);
    const double sigma = std::sqrt(p * (1 - p) / samples);
    EXPECT_NEAR(static_cast<double>(at_or_below[r]) / samples, p, 5 * sigma + 1e-12)
        << "n " << n << ", s " << s << ", P(rank <= " << ranks[r] << ")";
  }
}

TEST(ZipfSampler, TailsMatchTheExactCdfAtAHundredBillionKeys) {
  const std::int64_t n = 100'000'000'000;
  for (const double s : {0.5, 0.99, 1.0, 1.05, 1.3})
    expect_cdf_matches(n, s, {1, 10, 1000, 1'000'000, 1'000'000'000, n / 2}, 400000);
}

TEST(ZipfSampler, EveryRankCanOccurBeyondTwoToThe53) {
  // Doubles above 2^53 are 2 .. 1024 apart: without the fill-in step no odd rank up there could
  // be drawn. Uniform over 2^63 - 1 ranks: half the draws odd, 1/1024 multiples of 1024.
  constexpr std::int64_t n = std::numeric_limits<std::int64_t>::max();
  const ZipfSampler uniform(n, 0.0);
  RngCursor rng(CounterRng(31, 0));
  constexpr int kSamples = 200000;
  int odd = 0, multiple_of_1024 = 0;
  for (int i = 0; i < kSamples; ++i) {
    const auto k = uniform(rng);
    odd += static_cast<int>(k % 2);
    multiple_of_1024 += k % 1024 == 0 ? 1 : 0;
  }
  EXPECT_NEAR(odd / double{kSamples}, 0.5, 5 * std::sqrt(0.25 / kSamples));
  EXPECT_NEAR(multiple_of_1024 / double{kSamples}, 1.0 / 1024, 5 * std::sqrt((1.0 / 1024) / kSamples));
  // And the mass on each side of 2^53 is the exact cdf's, for the skews where both sides count.
  for (const double s : {0.0, 0.5, 0.99, 1.0}) expect_cdf_matches(n, s, {std::int64_t{1} << 53, n / 2}, 200000);
}

TEST(ZipfSampler, HandlesHugeVocabulariesAndTheSingleton) {
  const ZipfSampler huge(100'000'000'000LL, 1.05);
  RngCursor rng(CounterRng(3, 0));
  int hottest = 0;
  for (int i = 0; i < 10000; ++i) {
    const auto k = huge(rng);
    ASSERT_GE(k, 1);
    ASSERT_LE(k, 100'000'000'000LL);
    hottest += k == 1;
  }
  EXPECT_GT(hottest, 0);
  const ZipfSampler one(1, 2.0);
  EXPECT_EQ(one(rng), 1);
}

constexpr SimdLevel kSimdLevels[] = {SimdLevel::kBaseline, SimdLevel::kAvx2, SimdLevel::kAvx512};

// The batch paths (at every SIMD level this CPU runs) against the scalar one, the reference they
// must equal bit for bit: the same ranks and the same cursor positions, for exponents around 1 (the
// series branch of H^-1), heavy and flat ones, vocabularies beyond 2^53 (where an accepted draw
// consumes a second draw) and the singleton, with cursors at scattered streams and counters.
TEST(ZipfSampler, DrawEachGivesTheScalarRanksAndCursors) {
  constexpr std::int64_t kMaxN = std::numeric_limits<std::int64_t>::max();
  for (const std::int64_t n :
       {std::int64_t{1}, std::int64_t{2}, std::int64_t{1000}, std::int64_t{100'000'000'000}, kMaxN})
    for (const double s : {0.0, 0.5, 0.99, 0.99999999999, 1.0, 1.00000000001, 1.05, 1.3, 2.0, 7.0}) {
      const ZipfSampler sampler(n, s);
      constexpr std::size_t kDraws = 1000;  // several passes of lanes, and a partial one
      std::vector<RngCursor> batch, scalar;
      for (std::size_t i = 0; i < kDraws; ++i) {
        const RngCursor cursor(CounterRng(17 + i % 3, i * 7919), (i % 5) << 20);
        batch.push_back(cursor);
        scalar.push_back(cursor);
      }
      std::vector<std::int64_t> want(kDraws);
      for (std::size_t i = 0; i < kDraws; ++i) want[i] = sampler(scalar[i]);
      for (const SimdLevel level : kSimdLevels) {
        if (!cpu_runs(level)) continue;
        std::vector<RngCursor> cursors = batch;
        std::vector<std::int64_t> ranks(kDraws);
        sampler.draw_each(cursors, ranks, level);
        for (std::size_t i = 0; i < kDraws; ++i) {
          ASSERT_EQ(ranks[i], want[i]) << simd_level_name(level) << ": n " << n << ", s " << s << ", draw " << i;
          ASSERT_EQ(cursors[i].counter(), scalar[i].counter())
              << simd_level_name(level) << ": n " << n << ", s " << s << ", draw " << i;
        }
      }
    }
}

TEST(ZipfSampler, FillGivesTheScalarSequence) {
  constexpr std::int64_t kMaxN = std::numeric_limits<std::int64_t>::max();
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{7}, std::int64_t{1'000'000}, kMaxN})
    for (const double s : {0.0, 0.5, 1.0, 1.05, 2.0})
      for (const std::size_t count : {std::size_t{0}, std::size_t{1}, std::size_t{255}, std::size_t{3001}}) {
        const ZipfSampler sampler(n, s);
        RngCursor scalar(CounterRng(5, 6), 100);
        std::vector<std::int64_t> want(count);
        for (auto& rank : want) rank = sampler(scalar);
        for (const SimdLevel level : kSimdLevels) {
          if (!cpu_runs(level)) continue;
          RngCursor batch(CounterRng(5, 6), 100);
          std::vector<std::int64_t> ranks(count);
          sampler.fill(batch, ranks, level);
          EXPECT_EQ(ranks, want) << simd_level_name(level) << ": n " << n << ", s " << s << ", " << count << " draws";
          EXPECT_EQ(batch.counter(), scalar.counter())
              << simd_level_name(level) << ": n " << n << ", s " << s << ", " << count << " draws";
        }
      }
}

}  // namespace
}  // namespace embscale::workloads
