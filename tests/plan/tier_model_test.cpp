// The fast tier's predicted hit rate (plan/tier_model.hpp) against independent references:
// with one draw per step, the top capacity is the harmonic-number bound and recency is Che's
// approximation (lib/sim/zipf_analytic.hpp); with many draws per step, both against brute force:
// an LRU cache and a cache of the most popular keys fed de-duplicated batches of keys drawn from
// the popularity (fixed seeds), on a whole table and on one rank's key-modulo share of it.
#include "plan/tier_model.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <list>
#include <random>
#include <set>
#include <unordered_map>
#include <vector>

#include "sim/zipf_analytic.hpp"

namespace embscale::plan {
namespace {

TEST(TierModel, TopCapacityOfOneDrawPerStepIsTheHarmonicBound) {
  constexpr std::int64_t kKeys = 1'000'000;
  for (const double s : {0.8, 1.05, 1.2})
    for (const double capacity : {1'000.0, 20'000.0, 300'000.0}) {
      const auto popularity = KeyPopularity::zipf(kKeys, s);
      const TierSlot slot{&popularity, 1.0, 1.0};
      const auto p = top_capacity_tier(std::span(&slot, 1), capacity);
      EXPECT_NEAR(p.hit_rate, sim::zipf_top_capacity_hit_rate(static_cast<std::int64_t>(capacity), s, kKeys), 1e-9)
          << "s " << s << " capacity " << capacity;
      EXPECT_DOUBLE_EQ(p.held_keys, capacity);
    }
}

TEST(TierModel, RecencyOfOneDrawPerStepIsChesApproximation) {
  constexpr std::int64_t kKeys = 1'000'000;
  for (const double s : {0.8, 1.05, 1.2})
    for (const double capacity : {1'000.0, 20'000.0, 300'000.0}) {
      const auto popularity = KeyPopularity::zipf(kKeys, s);
      const TierSlot slot{&popularity, 1.0, 1.0};
      const auto p = recency_tier(std::span(&slot, 1), capacity);
      // Che's characteristic time with (1 - p)^T here, e^(-p T) in sim's: they differ by O(p^2 T),
      // only for keys that hit anyway.
      EXPECT_NEAR(p.hit_rate, sim::che_lru_hit_rate(static_cast<std::int64_t>(capacity), s, kKeys), 2e-3)
          << "s " << s << " capacity " << capacity;
    }
}

TEST(TierModel, EverythingFitsMeansNoMisses) {
  const auto popularity = KeyPopularity::zipf(1'000, 1.05);
  const TierSlot slot{&popularity, 1.0, 64.0};
  for (const auto& p : {recency_tier(std::span(&slot, 1), 1'000.0), top_capacity_tier(std::span(&slot, 1), 5'000.0)}) {
    EXPECT_EQ(p.misses, 0.0);
    EXPECT_EQ(p.hit_rate, 1.0);
    EXPECT_DOUBLE_EQ(p.held_keys, 1'000.0);
  }
  const auto none = recency_tier(std::span(&slot, 1), 0.0);
  EXPECT_EQ(none.hit_rate, 0.0);
}

// Brute force: `steps` batches of `draws` keys drawn from the popularity (inverse CDF), each
// de-duplicated; of rank 0's keys (key % ranks == 0), a lookup per distinct key is a hit when the
// cache holds it. The cache is LRU over whole steps, or the `capacity` most popular owned keys.
struct Simulated {
  double lru = 0.0, top = 0.0;
};

Simulated simulate(const KeyPopularity& popularity, int ranks, double draws, std::size_t capacity, int steps) {
  const std::int64_t keys = popularity.keys();
  std::vector<double> cdf(static_cast<std::size_t>(keys));
  double sum = 0.0;
  for (std::int64_t k = 0; k < keys; ++k) cdf[static_cast<std::size_t>(k)] = sum += popularity.probability(k);
  // The top capacity of rank 0's keys: its owned keys in order of popularity (non-increasing).
  std::set<std::int64_t> top;
  for (std::int64_t k = 0; k < keys && top.size() < capacity; k += ranks) top.insert(k);
  std::mt19937_64 random(20261128);
  std::uniform_real_distribution<double> uniform(0.0, sum);
  std::list<std::int64_t> lru;  // most recent first
  std::unordered_map<std::int64_t, std::list<std::int64_t>::iterator> where;
  double lookups = 0, lru_hits = 0, top_hits = 0;
  const int warm_up = steps / 5;
  for (int step = 0; step < steps; ++step) {
    std::set<std::int64_t> batch;
    for (int d = 0; d < static_cast<int>(draws); ++d) {
      const auto k = static_cast<std::int64_t>(std::lower_bound(cdf.begin(), cdf.end(), uniform(random)) - cdf.begin());
      if (k % ranks == 0) batch.insert(std::min(k, keys - 1));
    }
    for (const auto k : batch) {
      const auto it = where.find(k);
      if (step >= warm_up) {
        lookups += 1;
        lru_hits += it != where.end() ? 1 : 0;
        top_hits += top.count(k) ? 1 : 0;
      }
      if (it != where.end()) lru.erase(it->second);
      lru.push_front(k);
      where[k] = lru.begin();
    }
    while (lru.size() > capacity) {  // a step's keys enter together, the least recent leave
      where.erase(lru.back());
      lru.pop_back();
    }
  }
  return {lru_hits / lookups, top_hits / lookups};
}

TEST(TierModel, ManyDrawsPerStepAgainstBruteForce) {
  struct Case {
    double s;
    int ranks;
    double draws;
    std::size_t capacity;
  };
  for (const Case c :
       {Case{1.05, 1, 64, 400}, Case{0.8, 1, 256, 2'000}, Case{1.05, 4, 256, 300}, Case{1.2, 4, 64, 60}}) {
    const auto popularity = KeyPopularity::zipf(8'000, c.s);
    const TierSlot slot{&popularity, 1.0 / c.ranks, c.draws};
    const auto lru = recency_tier(std::span(&slot, 1), static_cast<double>(c.capacity));
    const auto top = top_capacity_tier(std::span(&slot, 1), static_cast<double>(c.capacity));
    const auto sim = simulate(popularity, c.ranks, c.draws, c.capacity, 20'000);
    std::printf("s %.2f ranks %d draws %.0f capacity %zu: LRU %.4f, Che %.4f; top capacity %.4f, predicted %.4f\n", c.s,
                c.ranks, c.draws, c.capacity, sim.lru, lru.hit_rate, sim.top, top.hit_rate);
    // Che per step against LRU; a thinned popularity against rank 0's own keys (its hottest key
    // is the table's hottest, a little more than 1/P of the traffic): within 1.5 points.
    EXPECT_NEAR(lru.hit_rate, sim.lru, 0.015) << "s " << c.s << " ranks " << c.ranks << " draws " << c.draws;
    EXPECT_NEAR(top.hit_rate, sim.top, 0.015) << "s " << c.s << " ranks " << c.ranks << " draws " << c.draws;
    EXPECT_GE(top.hit_rate, lru.hit_rate - 1e-12);  // no policy beats holding the most popular keys
  }
}

TEST(TierModel, SlotsShareTheCapacityByHowOftenTheirKeysAreAskedFor) {
  // Two slots in one table, one asked for 4 times as often: the top capacity holds the keys above
  // one rate across both, so the busier slot gets more of it, and the whole hit rate is between.
  const auto busy = KeyPopularity::zipf(100'000, 1.05), quiet = KeyPopularity::zipf(100'000, 1.05);
  const std::vector<TierSlot> both = {{&busy, 1.0, 400.0}, {&quiet, 1.0, 100.0}};
  const auto p = top_capacity_tier(both, 10'000.0);
  const auto alone = top_capacity_tier(std::span(both.data(), 1), 5'000.0);
  EXPECT_LE(p.held_keys, 10'000.0);
  EXPECT_GT(p.held_keys, 9'990.0);
  EXPECT_GT(p.hit_rate, 0.0);
  // The shared capacity serves the busy slot better than half of it alone would.
  const TierSlot busy_only{&busy, 1.0, 400.0};
  EXPECT_GT(top_capacity_tier(std::span(&busy_only, 1), 10'000.0).hit_rate, alone.hit_rate);
}

TEST(TierModel, HashShareMissesTheRestOfTheKeys) {
  const auto popularity = KeyPopularity::zipf(50'000, 1.05);
  const TierSlot slot{&popularity, 1.0, 500.0};
  // A run long enough that every fast key has come: the misses are the slow tier's keys.
  const auto long_run = hash_share_tier(std::span(&slot, 1), 0.3, 1e9);
  EXPECT_NEAR(long_run.misses, 0.7 * long_run.lookups, 1e-6 * long_run.lookups);
  EXPECT_NEAR(long_run.hit_rate, 0.3, 1e-6);
  // One step: every key is new, in either tier.
  const auto one_step = hash_share_tier(std::span(&slot, 1), 0.3, 1.0);
  EXPECT_NEAR(one_step.hit_rate, 0.0, 1e-12);
  // Between: the fast tier's first sights, D(steps) / steps a step.
  const auto run = hash_share_tier(std::span(&slot, 1), 0.3, 100.0);
  const double first_sights = popularity.expected_distinct(0, popularity.keys(), 500.0 * 100) / 100;
  EXPECT_NEAR(run.misses, 0.7 * run.lookups + 0.3 * first_sights, 1e-9 * run.lookups);
}

TEST(TierModel, RetentionFollowsTheStorage) {
  const auto zipf = KeyPopularity::zipf(1'000, 1.05);
  const TierSlot slot{&zipf, 1.0, 10.0};
  const std::span<const TierSlot> slots(&slot, 1);
  config::EmbeddingStorage storage;
  storage.dynamic = true;
  storage.global_hbm_for_values = 1 << 20;
  std::string note;
  EXPECT_EQ(tier_retention_of(storage, slots, note), TierRetention::kHashShare);  // hybrid
  storage.caching = true;
  storage.table.score_strategy = kv::ScoreStrategy::kTimestamp;
  EXPECT_EQ(tier_retention_of(storage, slots, note), TierRetention::kRecency);
  storage.table.score_strategy = kv::ScoreStrategy::kLfu;
  EXPECT_EQ(tier_retention_of(storage, slots, note), TierRetention::kRecency);  // counts restart without a filter
  storage.table.admission.kind = kv::AdmissionOptions::Kind::kTinyLfu;
  EXPECT_EQ(tier_retention_of(storage, slots, note), TierRetention::kTopCapacity);
  storage.table.admission.kind = kv::AdmissionOptions::Kind::kNone;
  storage.table.score_strategy = kv::ScoreStrategy::kFrequency;
  EXPECT_EQ(tier_retention_of(storage, slots, note), TierRetention::kTopCapacity);
  EXPECT_TRUE(note.empty());
  storage.table.score_strategy = kv::ScoreStrategy::kCustomized;
  EXPECT_EQ(tier_retention_of(storage, slots, note), TierRetention::kRecency);
  EXPECT_NE(note.find("CUSTOMIZED"), std::string::npos);

  // A hotspot whose cold keys are hotter than its hot ones is not ordered by index.
  config::KeySpec inverted;
  inverted.distribution = config::KeyDistribution::kHotspot;
  inverted.hot_key_fraction = 0.5;
  inverted.hot_access_fraction = 0.1;
  std::string why;
  const auto cold_first = KeyPopularity::of(inverted, 1'000, why);
  ASSERT_TRUE(cold_first);
  EXPECT_FALSE(cold_first->non_increasing());
  const TierSlot unordered{&*cold_first, 1.0, 10.0};
  storage.table.score_strategy = kv::ScoreStrategy::kFrequency;
  EXPECT_EQ(tier_retention_of(storage, std::span(&unordered, 1), note), TierRetention::kRecency);
  EXPECT_NE(note.find("not ordered"), std::string::npos);
}

TEST(TierModel, TheFastTiersCapacityIsTheStoresWholeBuckets) {
  const auto zipf = KeyPopularity::zipf(1'000'000, 1.05);
  const TierSlot slot{&zipf, 1.0, 1.0};
  config::EmbeddingStorage storage;
  storage.dynamic = true;
  storage.caching = true;
  storage.table.bucket_capacity = 128;
  storage.global_hbm_for_values = 1000 * 64;  // 1000 rows of 64 bytes: 7 whole buckets
  std::string note;
  EXPECT_DOUBLE_EQ(predict_fast_tier(storage, 64.0, std::span(&slot, 1), 10.0, note).capacity, 896.0);
  storage.global_hbm_for_values = 64;  // less than a bucket: one
  EXPECT_DOUBLE_EQ(predict_fast_tier(storage, 64.0, std::span(&slot, 1), 10.0, note).capacity, 128.0);
  storage.caching = false;
  storage.table.max_capacity = 4'000;
  storage.global_hbm_for_values = 1'000 * 64;
  EXPECT_DOUBLE_EQ(predict_fast_tier(storage, 64.0, std::span(&slot, 1), 10.0, note).capacity, 0.25);
}

}  // namespace
}  // namespace embscale::plan
