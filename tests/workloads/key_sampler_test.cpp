#include "workloads/key_sampler.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/math.hpp"
#include "tests/workloads/goodness_of_fit.hpp"
#include "workloads/peer_key_samplers.hpp"

namespace embscale::workloads {
namespace {

using testing::chi_square;

// Counts of `samples` draws per index; every draw must be inside [0, space).
std::vector<std::int64_t> histogram(const KeySampler& sampler, int samples, std::uint64_t seed) {
  std::vector<std::int64_t> counts(sampler.space(), 0);
  RngCursor rng(CounterRng(seed, 3));
  for (int i = 0; i < samples; ++i) {
    const auto k = sampler.draw(rng);
    EXPECT_LT(k, sampler.space());
    if (k < sampler.space()) ++counts[k];
  }
  return counts;
}

// The exact pmf of an index, as the test computes it independently of the sampler.
using Pmf = std::function<double(std::uint64_t)>;

std::vector<double> probabilities(std::uint64_t n, const Pmf& pmf) {
  std::vector<double> p(n);
  double total = 0.0;
  for (std::uint64_t k = 0; k < n; ++k) total += p[k] = pmf(k);
  EXPECT_NEAR(total, 1.0, 1e-9) << "the test's pmf must sum to 1";
  return p;
}

void expect_fits(const KeySampler& sampler, const Pmf& pmf, const std::string& what, int samples = 200000) {
  const auto fit = chi_square(histogram(sampler, samples, 41), probabilities(sampler.space(), pmf));
  EXPECT_TRUE(fit.passes()) << what << ": " << fit.report();
}

double zipf_index_pmf(std::uint64_t k, std::uint64_t n, double s) {
  return zipf_pmf(static_cast<std::int64_t>(k) + 1, static_cast<std::int64_t>(n), s);
}

TEST(UniformKeys, EveryIndexEquallyLikely) {
  for (const std::uint64_t n : {1u, 7u, 100u})
    expect_fits(
        UniformKeys(n), [n](auto) { return 1.0 / static_cast<double>(n); }, "uniform");
}

TEST(UniformKeys, ReachesTheTopOfA63BitSpace) {
  const UniformKeys keys(std::uint64_t{1} << 63);
  RngCursor rng(CounterRng(5, 0));
  int upper_half = 0;
  for (int i = 0; i < 4000; ++i) upper_half += keys.draw(rng) >= (std::uint64_t{1} << 62);
  EXPECT_NEAR(upper_half / 4000.0, 0.5, 5 * std::sqrt(0.25 / 4000));
}

TEST(ZipfKeys, IndexZeroIsRankOne) {
  for (const double s : {0.0, 0.9, 1.3})
    expect_fits(
        ZipfKeys(120, s), [s](auto k) { return zipf_index_pmf(k, 120, s); }, "zipf");
}

TEST(HotspotKeys, HotAccessesOnTheHotSet) {
  // YCSB's defaults: 80% of the draws on 20% of the keys.
  const HotspotKeys keys(100, 0.2, 0.8);
  EXPECT_EQ(keys.hot_keys(), 20u);
  expect_fits(
      keys, [](std::uint64_t k) { return k < 20 ? 0.8 / 20 : 0.2 / 80; }, "hotspot 0.2/0.8");
  // The hot set rounds to the nearest count, at least one key; a full hot set is uniform.
  EXPECT_EQ(HotspotKeys(1000, 0.0004, 0.5).hot_keys(), 1u);
  EXPECT_EQ(HotspotKeys(1000, 0.0125, 0.5).hot_keys(), 13u);
  expect_fits(
      HotspotKeys(50, 1.0, 0.3), [](auto) { return 1.0 / 50; }, "hotspot with every key hot");
}

TEST(MixtureKeys, ComponentsByWeight) {
  const auto n = 80u;
  const MixtureKeys keys({{3.0, std::make_shared<UniformKeys>(n)}, {7.0, std::make_shared<ZipfKeys>(n, 1.2)}});
  expect_fits(
      keys, [n](auto k) { return 0.3 / n + 0.7 * zipf_index_pmf(k, n, 1.2); }, "mixture");
}

TEST(MixtureKeys, HugeWeightsDoNotOverflow) {
  const auto n = 30u;
  const MixtureKeys keys({{1e308, std::make_shared<UniformKeys>(n)},
                          {1e308, std::make_shared<HotspotKeys>(n, 0.1, 1.0)},
                          {1e308, std::make_shared<HotspotKeys>(n, 0.1, 0.0)}});
  expect_fits(
      keys, [](std::uint64_t k) { return 1.0 / 90 + (k < 3 ? 1.0 / 9 : 1.0 / 81); }, "mixture of 1e308 weights");
}

TEST(RotatedAndMirroredKeys, MoveTheHotEnd) {
  const auto n = 60u;
  const auto base = std::make_shared<ZipfKeys>(n, 1.1);
  expect_fits(
      RotatedKeys(base, 45), [n](auto k) { return zipf_index_pmf((k + n - 45) % n, n, 1.1); }, "rotated");
  expect_fits(
      MirroredKeys(base), [n](auto k) { return zipf_index_pmf(n - 1 - k, n, 1.1); }, "mirrored");
}

TEST(KeySamplers, RefuseEmptySpacesAndBadParameters) {
  EXPECT_THROW(UniformKeys(0), Error);
  EXPECT_THROW(ZipfKeys(0, 1.0), Error);
  EXPECT_THROW(ZipfKeys(std::uint64_t{1} << 63, 1.0), Error);
  EXPECT_THROW(HotspotKeys(10, 0.0, 0.5), Error);
  EXPECT_THROW(HotspotKeys(10, 0.5, 1.5), Error);
  EXPECT_THROW(MixtureKeys({}), Error);
  EXPECT_THROW(MixtureKeys({{1.0, std::make_shared<UniformKeys>(5)}, {1.0, std::make_shared<UniformKeys>(6)}}), Error);
  EXPECT_THROW(RotatedKeys(std::make_shared<UniformKeys>(5), 5), Error);
  EXPECT_THROW(HugeCtrPowerLawKeys(10, 1.0), Error);
}

// HugeCTR: P(k) = F(k + 3/2) - F(k + 1/2), F(y) = (y^(1-a) - 1) / (N^(1-a) - 1) clipped to [1, N].
TEST(HugeCtrPowerLawKeys, RoundsTheContinuousPowerLaw) {
  const std::uint64_t n = 150;
  for (const double a : {0.9, 1.1, 1.3, 2.5}) {
    auto cdf = [&](double y) {
      y = std::clamp(y, 1.0, static_cast<double>(n));
      return (std::pow(y, 1.0 - a) - 1.0) / (std::pow(static_cast<double>(n), 1.0 - a) - 1.0);
    };
    expect_fits(
        HugeCtrPowerLawKeys(n, a),
        [&](std::uint64_t k) { return cdf(static_cast<double>(k) + 1.5) - cdf(static_cast<double>(k) + 0.5); },
        "hugectr alpha " + std::to_string(a));
  }
}

TEST(HugeCtrPowerLawKeys, PresetsAreHugeCtrsExponents) {
  config::KeySpec spec;
  spec.power_law = config::HugeCtrPowerLaw::kLong;
  EXPECT_EQ(hugectr_alpha(spec), 0.9);
  spec.power_law = config::HugeCtrPowerLaw::kMedium;
  EXPECT_EQ(hugectr_alpha(spec), 1.1);
  spec.power_law = config::HugeCtrPowerLaw::kShort;
  EXPECT_EQ(hugectr_alpha(spec), 1.3);
  spec.power_law = config::HugeCtrPowerLaw::kSpecific;
  spec.zipf_alpha = 1.2;
  EXPECT_EQ(hugectr_alpha(spec), 1.2);
}

// FBGEMM folds numpy's Zipf (x >= 1, below 2^63) modulo N: P(k) is the Zipf mass of the
// progression k + 1, k + 1 + N, ... . The test sums it directly to 10^7 and adds the rest by
// Euler-Maclaurin's first two terms (the error, ~N a x^(-a-1) / 12, is far below the test's).
TEST(FbgemmZipfKeys, FoldsNumpysZipfModuloN) {
  const std::uint64_t n = 50;
  const double top = 0x1.0p63 - 1.0;
  for (const double a : {1.15, 2.0}) {
    const double total = generalized_harmonic(std::numeric_limits<std::int64_t>::max(), a);
    auto pmf = [&](std::uint64_t k) {
      constexpr double kDirect = 1e7;
      double sum = 0.0;
      double x = static_cast<double>(k + 1);
      for (; x < kDirect; x += static_cast<double>(n)) sum += std::pow(x, -a);
      // Euler-Maclaurin: the integral over the progression's stretch plus half its first term.
      sum += (std::pow(x, 1.0 - a) - std::pow(top, 1.0 - a)) / ((a - 1.0) * static_cast<double>(n)) +
             0.5 * std::pow(x, -a);
      return sum / total;
    };
    expect_fits(FbgemmZipfKeys(n, a), pmf, "fbgemm alpha " + std::to_string(a));
  }
  expect_fits(
      FbgemmZipfKeys(n, 1.0), [n](auto) { return 1.0 / n; }, "fbgemm alpha 1 (uniform, as FBGEMM)");
}

TEST(DlrmUniformKeys, EndKeysHalfAsLikely) {
  const std::uint64_t n = 101;
  expect_fits(
      DlrmUniformKeys(n), [n](std::uint64_t k) { return (k == 0 || k == n - 1 ? 0.5 : 1.0) / (n - 1); },
      "dlrm uniform");
  RngCursor rng(CounterRng(1, 1));
  EXPECT_EQ(DlrmUniformKeys(1).draw(rng), 0u);
}

// draw_each against one draw at a time (its definition): the same indices and cursor positions
// for every sampler with a batch path or a wrapper around one, at small and 63-bit spaces, with
// cursors on scattered streams and counters.
TEST(KeySamplers, DrawEachIsOneDrawAtATime) {
  constexpr std::uint64_t kMaxSpace = std::numeric_limits<std::int64_t>::max();
  for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{97}, kMaxSpace}) {
    const auto zipf = std::make_shared<ZipfKeys>(n, 1.1);
    const std::vector<std::pair<std::string, SharedSampler>> samplers = {
        {"uniform", std::make_shared<UniformKeys>(n)},
        {"zipf", zipf},
        {"hotspot", std::make_shared<HotspotKeys>(n, 0.2, 0.8)},
        {"mixture",
         std::make_shared<MixtureKeys>(std::vector<std::pair<double, SharedSampler>>{
             {0.6, zipf}, {0.3, std::make_shared<UniformKeys>(n)}, {0.1, std::make_shared<ZipfKeys>(n, 0.5)}})},
        {"rotated", std::make_shared<RotatedKeys>(zipf, n / 3)},
        {"mirrored", std::make_shared<MirroredKeys>(zipf)},
        {"fbgemm_zipf", std::make_shared<FbgemmZipfKeys>(n, 1.15)},
        {"fbgemm_zipf uniform", std::make_shared<FbgemmZipfKeys>(n, 0.9)}};
    for (const auto& [name, sampler] : samplers) {
      std::vector<RngCursor> batch, one_by_one;
      for (std::uint64_t i = 0; i < 2000; ++i) batch.emplace_back(CounterRng(3 + i % 4, i * 31), (i % 7) << 20);
      one_by_one = batch;
      std::vector<std::uint64_t> indices(batch.size());
      sampler->draw_each(batch, indices);
      for (std::size_t i = 0; i < batch.size(); ++i) {
        ASSERT_EQ(indices[i], sampler->draw(one_by_one[i])) << name << ", n " << n << ", draw " << i;
        ASSERT_EQ(batch[i].counter(), one_by_one[i].counter()) << name << ", n " << n << ", draw " << i;
      }
    }
  }
}

}  // namespace
}  // namespace embscale::workloads
