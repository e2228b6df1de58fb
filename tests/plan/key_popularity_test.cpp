#include "plan/key_popularity.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace embscale::plan {
namespace {

// The popularities checked: Zipf laws, uniform, hotspot and a mixture, over slots reaching past
// kDirectIndices (where the tail's quadrature takes over from the direct sums).
struct Case {
  std::string name;
  config::KeySpec spec;
  std::int64_t keys;
};

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const double s : {0.0, 0.8, 1.05, 1.3, 2.0}) {
    config::KeySpec zipf;
    zipf.zipf_alpha = s;
    out.push_back({"zipf " + std::to_string(s), zipf, 200'000});
  }
  config::KeySpec uniform;
  uniform.distribution = config::KeyDistribution::kUniform;
  out.push_back({"uniform", uniform, 150'001});
  config::KeySpec hotspot;
  hotspot.distribution = config::KeyDistribution::kHotspot;
  hotspot.hot_key_fraction = 0.7;  // the hot/cold edge past kDirectIndices
  hotspot.hot_access_fraction = 0.9;
  out.push_back({"hotspot", hotspot, 120'000});
  config::KeySpec mixture;
  mixture.distribution = config::KeyDistribution::kMixture;
  config::KeySpec part;
  part.zipf_alpha = 1.2;
  mixture.mixture = {{3.0, part}, {1.0, hotspot}};
  out.push_back({"mixture", mixture, 100'000});
  return out;
}

// Brute force: every index's probability, summed and raised directly in long double.
struct Direct {
  std::vector<double> p;
  long double mass(std::int64_t first, std::int64_t last) const {
    long double sum = 0;
    for (auto k = last; k-- > first;) sum += p[static_cast<std::size_t>(k)];
    return sum;
  }
  long double distinct(std::int64_t first, std::int64_t last, double draws) const {
    long double sum = 0;
    for (auto k = last; k-- > first;)
      sum += 1.0L - std::pow(1.0L - p[static_cast<std::size_t>(k)], static_cast<long double>(draws));
    return sum;
  }
};

// The generator's own formulas, written out: Zipf (k + 1)^-s / H, hotspot's hot and cold halves.
double generator_probability(const config::KeySpec& spec, std::int64_t k, std::int64_t n) {
  switch (spec.distribution) {
    case config::KeyDistribution::kUniform: return 1.0 / static_cast<double>(n);
    case config::KeyDistribution::kZipf: {
      long double h = 0;
      for (std::int64_t i = n; i >= 1; --i)
        h += std::pow(static_cast<long double>(i), -static_cast<long double>(spec.zipf_alpha));
      return static_cast<double>(std::pow(static_cast<long double>(k + 1), -static_cast<long double>(spec.zipf_alpha)) /
                                 h);
    }
    case config::KeyDistribution::kHotspot: {
      const auto hot = static_cast<std::int64_t>(std::llround(spec.hot_key_fraction * static_cast<double>(n)));
      return k < hot ? spec.hot_access_fraction / static_cast<double>(hot)
                     : (1.0 - spec.hot_access_fraction) / static_cast<double>(n - hot);
    }
    default: return 0.0;
  }
}

TEST(KeyPopularity, ProbabilitiesAreTheGeneratorsFormulas) {
  for (const auto& c : cases()) {
    if (c.spec.distribution == config::KeyDistribution::kMixture) continue;
    std::string why;
    const auto model = KeyPopularity::of(c.spec, c.keys, why);
    ASSERT_TRUE(model) << c.name << ": " << why;
    for (const std::int64_t k : {std::int64_t{0}, std::int64_t{1}, std::int64_t{17}, c.keys / 2, c.keys - 1}) {
      const double expected = generator_probability(c.spec, k, c.keys);
      EXPECT_NEAR(model->probability(k), expected, 1e-12 * expected) << c.name << " k " << k;
    }
  }
}

TEST(KeyPopularity, MassAndDistinctKeysMatchDirectSums) {
  for (const auto& c : cases()) {
    std::string why;
    const auto model = KeyPopularity::of(c.spec, c.keys, why);
    ASSERT_TRUE(model) << c.name << ": " << why;
    Direct direct;
    for (std::int64_t k = 0; k < c.keys; ++k) direct.p.push_back(model->probability(k));
    EXPECT_NEAR(model->mass(0, c.keys), 1.0, 1e-12) << c.name;
    const std::vector<std::pair<std::int64_t, std::int64_t>> ranges = {
        {0, c.keys}, {0, 10}, {5, 70'000}, {kDirectIndices, c.keys}, {c.keys / 3, c.keys}, {99'000, 99'001}};
    for (const auto& [first, last] : ranges) {
      const double mass = static_cast<double>(direct.mass(first, last));
      EXPECT_NEAR(model->mass(first, last), mass, 1e-12 + 1e-11 * mass)
          << c.name << " [" << first << ", " << last << ")";
      for (const double draws : {1.0, 4096.0, 1e6, 1e9}) {
        const double distinct = static_cast<double>(direct.distinct(first, last, draws));
        EXPECT_NEAR(model->expected_distinct(first, last, draws), distinct, 1e-9 + 1e-7 * distinct)
            << c.name << " [" << first << ", " << last << ") draws " << draws;
      }
    }
  }
}

TEST(KeyPopularity, SaysWhichGeneratorsHaveNoModel) {
  config::KeySpec spec;
  spec.distribution = config::KeyDistribution::kHugeCtrPowerLaw;
  std::string why;
  EXPECT_FALSE(KeyPopularity::of(spec, 1000, why));
  EXPECT_NE(why.find("hugectr_power_law"), std::string::npos) << why;

  config::SlotWorkload workload;
  workload.nnz = 6;
  workload.nnz_min = 2;
  workload.nnz_distribution = config::NnzDistribution::kUniform;
  why.clear();
  EXPECT_EQ(analytic_bag_size(workload, why).value_or(-1), 4.0);
  workload.drift.period = 10;
  EXPECT_FALSE(analytic_bag_size(workload, why));
  EXPECT_NE(why.find("drift"), std::string::npos) << why;
}

}  // namespace
}  // namespace embscale::plan
