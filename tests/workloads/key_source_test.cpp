#include "workloads/key_source.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "tests/workloads/goodness_of_fit.hpp"

namespace embscale::workloads {
namespace {

TEST(KeyDistributionRegistry, ListsEveryDistributionUnderItsConfigName) {
  const auto& registry = key_distribution_registry();
  const auto& names = config::key_distribution_names();
  ASSERT_EQ(registry.size(), names.size());
  for (std::size_t i = 0; i < registry.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(registry[i].id), i);
    EXPECT_EQ(registry[i].name, names[i]);
    EXPECT_EQ(config::to_string(registry[i].id), names[i]);
    EXPECT_FALSE(registry[i].summary.empty());
    config::KeySpec spec;
    spec.distribution = registry[i].id;
    spec.mixture = {{1.0, config::KeySpec{}}};
    EXPECT_EQ(make_key_sampler(spec, 37)->space(), 37u) << names[i];
  }
}

TEST(GrownSpace, GrowsLinearlyUpToTheSlot) {
  config::GrowthSpec g;
  EXPECT_EQ(grown_space(g, 1000, 5), 1000u);  // no growth: every id exists
  g.initial_keys = 10;
  g.keys_per_iteration = 7;
  EXPECT_EQ(grown_space(g, 1000, 0), 10u);
  EXPECT_EQ(grown_space(g, 1000, 3), 31u);
  EXPECT_EQ(grown_space(g, 1000, 1000), 1000u);
  g.keys_per_iteration = std::numeric_limits<std::int64_t>::max();  // no overflow
  EXPECT_EQ(grown_space(g, std::uint64_t{1} << 62, std::numeric_limits<std::int64_t>::max()), std::uint64_t{1} << 62);
}

TEST(DriftOffset, AbruptStepsAndGradualSlides) {
  config::DriftSpec d;
  EXPECT_EQ(drift_offset(d, 1000, 77), 0u);  // no drift
  d.period = 10;
  d.shift = 0.25;
  d.mode = config::DriftMode::kAbrupt;
  EXPECT_EQ(drift_offset(d, 1000, 0), 0u);
  EXPECT_EQ(drift_offset(d, 1000, 9), 0u);
  EXPECT_EQ(drift_offset(d, 1000, 10), 250u);
  EXPECT_EQ(drift_offset(d, 1000, 39), 750u);
  EXPECT_EQ(drift_offset(d, 1000, 40), 0u);  // a full turn
  d.mode = config::DriftMode::kGradual;
  EXPECT_EQ(drift_offset(d, 1000, 1), 25u);
  EXPECT_EQ(drift_offset(d, 1000, 10), 250u);
  EXPECT_EQ(drift_offset(d, 1000, 13), 325u);
  // Exact at 2^63 keys: 128-bit products.
  d.shift = 0.5;
  EXPECT_EQ(drift_offset(d, std::uint64_t{1} << 63, 3), 1383505805528216371u);  // floor(3 2^62 / 10)
  EXPECT_EQ(drift_offset(d, std::uint64_t{1} << 63, 10), std::uint64_t{1} << 62);
  EXPECT_EQ(drift_offset(d, std::uint64_t{1} << 63, 20), 0u);
}

// Hotspot base (hot set [0, 10) of 100, 90% of draws): its distribution is easy to state at any
// iteration, after growth and drift.
config::SlotWorkload hotspot_workload() {
  config::SlotWorkload w;
  w.keys.distribution = config::KeyDistribution::kHotspot;
  w.keys.hot_key_fraction = 0.1;
  w.keys.hot_access_fraction = 0.9;
  return w;
}

std::vector<std::int64_t> histogram(const KeySampler& sampler, std::uint64_t n, int samples) {
  std::vector<std::int64_t> counts(n, 0);
  RngCursor rng(CounterRng(8, 8));
  for (int i = 0; i < samples; ++i) {
    const auto k = sampler.draw(rng);
    EXPECT_LT(k, sampler.space());
    ++counts[k];
  }
  return counts;
}

TEST(KeySource, StationarySharesOneSampler) {
  const auto source = make_key_source(hotspot_workload(), 100);
  EXPECT_EQ(source->sampler_at(0), source->sampler_at(12345));
  EXPECT_EQ(source->space(), 100u);
}

TEST(KeySource, DriftRotatesTheHotSet) {
  auto w = hotspot_workload();
  w.drift.period = 5;
  w.drift.shift = 0.3;
  const auto source = make_key_source(w, 100);
  const auto sampler = source->sampler_at(11);  // two periods: rotated by 60
  std::vector<double> p(100);
  for (std::uint64_t k = 0; k < 100; ++k) p[k] = ((k + 40) % 100 < 10) ? 0.09 : 0.1 / 90;
  const auto fit = testing::chi_square(histogram(*sampler, 100, 100000), p);
  EXPECT_TRUE(fit.passes()) << fit.report();
}

TEST(KeySource, GrowthDrawsOnlyIdsThatExist) {
  auto w = hotspot_workload();
  w.growth.initial_keys = 20;
  w.growth.keys_per_iteration = 30;
  for (const auto hot : {config::GrowthOrder::kOldestHot, config::GrowthOrder::kNewestHot}) {
    w.growth.hot = hot;
    const auto source = make_key_source(w, 100);
    EXPECT_EQ(source->space(), 100u);
    const auto sampler = source->sampler_at(1);  // 50 ids exist; hot set 5 of them
    ASSERT_EQ(sampler->space(), 50u);
    std::vector<double> p(100, 0.0);
    for (std::uint64_t k = 0; k < 50; ++k) {
      const std::uint64_t age_rank = hot == config::GrowthOrder::kOldestHot ? k : 49 - k;
      p[k] = age_rank < 5 ? 0.9 / 5 : 0.1 / 45;
    }
    const auto counts = histogram(*sampler, 100, 100000);
    for (std::uint64_t k = 50; k < 100; ++k) EXPECT_EQ(counts[k], 0) << "id " << k << " does not exist yet";
    const auto fit = testing::chi_square(counts, p);
    EXPECT_TRUE(fit.passes()) << fit.report();
    EXPECT_EQ(source->sampler_at(3)->space(), 100u);
  }
}

TEST(KeySource, DriftAndGrowthCompose) {
  auto w = hotspot_workload();
  w.growth.initial_keys = 40;
  w.growth.keys_per_iteration = 10;
  w.drift.period = 1;
  w.drift.shift = 0.5;
  const auto source = make_key_source(w, 100);
  const auto sampler = source->sampler_at(1);  // 50 ids, rotated by 25 within them
  ASSERT_EQ(sampler->space(), 50u);
  const auto counts = histogram(*sampler, 100, 20000);
  std::set<std::uint64_t> hot;
  for (std::uint64_t k = 0; k < 100; ++k)
    if (counts[k] > 600) hot.insert(k);
  EXPECT_EQ(hot, (std::set<std::uint64_t>{25, 26, 27, 28, 29}));
}

}  // namespace
}  // namespace embscale::workloads
