// Admission filters (lib/kv/admission.hpp): each rule on its own (k-th sighting, saturation,
// aging, TinyLFU's comparison, banks per bucket, growth, clear, memory), the table's handling of
// keys kept out, and the point of it all: on a Zipf stream into a small table both filters raise
// the hit rate over no filter.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <vector>

#include "admission_reference.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "kv/admission.hpp"
#include "kv/host_table.hpp"
#include "kv/initializer.hpp"

namespace embscale::kv {
namespace {

using Kind = AdmissionOptions::Kind;

AdmissionOptions options_of(Kind kind) {
  AdmissionOptions o;
  o.kind = kind;
  o.max_count = 255;
  o.aging_factor = 0.0;  // no aging unless a test asks for it
  return o;
}

// A key of bucket `bucket` among `buckets`, the n-th such from 0 up.
std::uint64_t key_in_bucket(std::int64_t bucket, std::int64_t buckets, int n) {
  for (std::uint64_t k = 0;; ++k)
    if (static_cast<std::int64_t>(mix64(k) & static_cast<std::uint64_t>(buckets - 1)) == bucket && n-- == 0) return k;
}

TEST(KCountAdmission, AdmitsOnTheKthSighting) {
  AdmissionOptions o = options_of(Kind::kKCount);
  o.threshold_k = 3;
  AdmissionFilter filter(o, 16, 1);
  EXPECT_FALSE(filter.admit(10, Placement::kFreeSlot, 0));
  EXPECT_FALSE(filter.admit(10, Placement::kEvict, 11));
  EXPECT_TRUE(filter.admit(10, Placement::kFreeSlot, 0)) << "the third sighting";
  // Refused newcomers and hits count as sightings too; a refused one is never admitted.
  EXPECT_FALSE(filter.admit(20, Placement::kRefused, 21));
  EXPECT_FALSE(filter.admit(20, Placement::kRefused, 21));
  EXPECT_FALSE(filter.admit(20, Placement::kRefused, 21));
  EXPECT_TRUE(filter.admit(20, Placement::kEvict, 21));
  filter.record(30);
  EXPECT_FALSE(filter.admit(30, Placement::kFreeSlot, 0));
  filter.record(30);
  EXPECT_TRUE(filter.admit(30, Placement::kFreeSlot, 0));
}

TEST(KCountAdmission, ThresholdOneAdmitsEveryNewcomerWithAPlace) {
  AdmissionOptions o = options_of(Kind::kKCount);
  o.threshold_k = 1;
  AdmissionFilter filter(o, 16, 1);
  EXPECT_TRUE(filter.admit(1, Placement::kFreeSlot, 0));
  EXPECT_TRUE(filter.admit(2, Placement::kEvict, 1));
  EXPECT_FALSE(filter.admit(3, Placement::kRefused, 1));
}

TEST(AdmissionSketch, CountersSaturate) {
  AdmissionOptions o = options_of(Kind::kKCount);
  o.max_count = 5;
  o.threshold_k = 5;
  AdmissionFilter filter(o, 16, 1);
  for (int i = 0; i < 100; ++i) filter.record(42);
  EXPECT_EQ(filter.estimate(42), 5);
  EXPECT_TRUE(filter.admit(42, Placement::kFreeSlot, 0));
}

TEST(AdmissionSketch, AgingHalvesEveryCounterOfTheBank) {
  AdmissionOptions o = options_of(Kind::kTinyLfu);
  o.aging_factor = 1.0;  // a bank halves at its 16th sighting (bucket_capacity 16)
  AdmissionFilter filter(o, 16, 1);
  for (int i = 0; i < 10; ++i) EXPECT_FALSE(filter.record(7));
  for (int i = 0; i < 5; ++i) EXPECT_FALSE(filter.record(8));
  EXPECT_EQ(filter.estimate(7), 10);
  EXPECT_EQ(filter.estimate(8), 5);
  EXPECT_TRUE(filter.record(8)) << "the 16th sighting says it aged the bank";  // 10 -> 5, 6 -> 3
  EXPECT_EQ(filter.estimate(7), 5);
  EXPECT_EQ(filter.estimate(8), 3);
  for (int i = 0; i < 15; ++i) EXPECT_FALSE(filter.record(9));
  EXPECT_EQ(filter.estimate(7), 5) << "the count restarted at the halving";
  EXPECT_TRUE(filter.record(9));
  EXPECT_EQ(filter.estimate(7), 2);
  EXPECT_EQ(filter.estimate(9), 8);
}

TEST(TinyLfuAdmission, PrefersAFrequentKeyOverAOneHitWonder) {
  AdmissionFilter filter(options_of(Kind::kTinyLfu), 16, 1);
  const std::uint64_t regular = 100;
  for (int i = 0; i < 4; ++i) filter.record(regular);
  EXPECT_TRUE(filter.admit(200, Placement::kFreeSlot, 0)) << "a free slot takes anyone";
  EXPECT_FALSE(filter.admit(300, Placement::kEvict, regular)) << "1 sighting against 4";
  EXPECT_FALSE(filter.admit(300, Placement::kRefused, regular));
  EXPECT_FALSE(filter.admit(300, Placement::kEvict, regular)) << "3 against 4";
  EXPECT_FALSE(filter.admit(300, Placement::kEvict, regular)) << "a tie keeps the incumbent";
  EXPECT_TRUE(filter.admit(300, Placement::kEvict, regular)) << "5 against 4";
  // The frequent key displaces a one-hit wonder at once.
  EXPECT_TRUE(filter.admit(regular, Placement::kEvict, 200));
}

TEST(AdmissionSketch, BanksOfDifferentBucketsShareNoCounter) {
  AdmissionOptions o = options_of(Kind::kTinyLfu);
  o.depth = 1;
  o.cells_per_slot = 1.0;  // one block of 64 counters per bank (16 slots): 200 keys share them
  AdmissionFilter filter(o, 16, 2);
  const std::uint64_t a = key_in_bucket(0, 2, 0);
  for (int i = 0; i < 9; ++i) filter.record(a);
  int same_bank_sharing = 0;
  for (int n = 1; n <= 200; ++n) same_bank_sharing += filter.estimate(key_in_bucket(0, 2, n)) == 9;
  EXPECT_GT(same_bank_sharing, 0) << "200 keys on 64 counters: some share a's";
  for (int n = 0; n < 200; ++n) EXPECT_EQ(filter.estimate(key_in_bucket(1, 2, n)), 0) << "another bank";
}

// Caffeine's layout: a key's counters lie in one 64-byte block, one per row in the row's own
// part of the block; keys that share the block but not a counter of every row keep their own
// estimates.
TEST(AdmissionSketch, EachKeysCountersLieInOneBlockOfItsBank) {
  AdmissionOptions o = options_of(Kind::kTinyLfu);
  o.depth = 4;
  o.cells_per_slot = 0.5;  // 4 x 0.5 x 128 / 64 = 4 blocks per bank
  AdmissionFilter filter(o, 128, 1);
  EXPECT_EQ(filter.memory_bytes(), 4u * 64u + 4u);
  std::mt19937_64 rng(3);
  std::vector<std::uint64_t> keys(40);
  for (auto& k : keys) k = rng() >> 2;
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t t = 0; t <= i % 5; ++t) filter.record(keys[i]);
  testing::ReferenceAdmission reference(o, 128, 1);
  for (std::size_t i = 0; i < keys.size(); ++i)
    for (std::size_t t = 0; t <= i % 5; ++t) reference.record(keys[i]);
  int exact = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(filter.estimate(keys[i]), reference.estimate(keys[i])) << i;
    EXPECT_GE(filter.estimate(keys[i]), static_cast<int>(i % 5) + 1) << "a count-min estimate never undercounts";
    exact += filter.estimate(keys[i]) == static_cast<int>(i % 5) + 1;
  }
  EXPECT_GE(exact, 30) << "40 keys on 4 blocks of 4 rows of 16: most estimates exact";
}

// Conservative update adds only to the key's smallest counters: the same estimate for the key,
// never a larger one for any other key than plain count-min gives.
TEST(AdmissionSketch, ConservativeUpdateInflatesOtherKeysLess) {
  AdmissionOptions plain = options_of(Kind::kTinyLfu);
  plain.cells_per_slot = 0.25;  // crowded: 1 block of 4 rows of 16 counters for 64 keys
  AdmissionOptions conservative = plain;
  conservative.conservative_update = true;
  AdmissionFilter a(plain, 64, 1), b(conservative, 64, 1);
  testing::ReferenceAdmission reference(conservative, 64, 1);
  std::mt19937_64 rng(9);
  std::vector<std::uint64_t> keys(64);
  for (auto& k : keys) k = rng() >> 2;
  std::vector<int> truth(keys.size());
  for (int t = 0; t < 2000; ++t) {
    const std::size_t i = rng() % keys.size();
    ++truth[i];
    a.record(keys[i]);
    b.record(keys[i]);
    reference.record(keys[i]);
  }
  long over_plain = 0, over_conservative = 0;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    EXPECT_EQ(b.estimate(keys[i]), reference.estimate(keys[i])) << i;
    EXPECT_GE(b.estimate(keys[i]), std::min(truth[i], 255)) << i;
    EXPECT_LE(b.estimate(keys[i]), a.estimate(keys[i])) << i;
    over_plain += a.estimate(keys[i]) - truth[i];
    over_conservative += b.estimate(keys[i]) - truth[i];
  }
  EXPECT_LT(over_conservative, over_plain / 2) << "overestimation " << over_conservative << " vs " << over_plain;
}

TEST(AdmissionSketch, GrowthKeepsEveryEstimate) {
  AdmissionOptions o = options_of(Kind::kTinyLfu);
  o.cells_per_slot = 0.5;  // collisions, so the estimates are not all exact
  AdmissionFilter filter(o, 16, 2);
  std::mt19937_64 rng(5);
  for (int i = 0; i < 500; ++i) filter.record(rng() % 64);
  std::vector<int> before(64);
  for (std::uint64_t k = 0; k < 64; ++k) before[k] = filter.estimate(k);
  filter.resize(8);
  for (std::uint64_t k = 0; k < 64; ++k) EXPECT_EQ(filter.estimate(k), before[k]) << k;
  filter.clear();
  for (std::uint64_t k = 0; k < 64; ++k) EXPECT_EQ(filter.estimate(k), 0) << k;
}

TEST(AdmissionSketch, IsAFunctionOfTheCallsAndTheSeed) {
  AdmissionOptions o = options_of(Kind::kTinyLfu);
  o.aging_factor = 2.0;
  o.max_count = 15;
  o.cells_per_slot = 0.5;
  const auto run = [](const AdmissionOptions& options) {
    AdmissionFilter filter(options, 16, 4);
    std::mt19937_64 rng(11);
    std::vector<int> out;
    for (int i = 0; i < 3000; ++i) {
      const std::uint64_t key = rng() % 200;
      if (i == 1500) filter.resize(8);
      if (rng() % 3 == 0) filter.record(key);
      else out.push_back(filter.admit(key, static_cast<Placement>(rng() % 3), rng() % 200));
    }
    for (std::uint64_t k = 0; k < 200; ++k) out.push_back(filter.estimate(k));
    return out;
  };
  EXPECT_EQ(run(o), run(o));
  AdmissionOptions other = o;
  other.seed = 1;
  EXPECT_NE(run(o), run(other)) << "the seed picks the cells";
}

TEST(AdmissionFilter, MemoryIsBanksTimesBlocksOfALine) {
  EXPECT_EQ(AdmissionFilter().memory_bytes(), 0u);
  EXPECT_EQ(AdmissionFilter(AdmissionOptions{}, 128, 32).memory_bytes(), 0u) << "kind none";
  AdmissionOptions o;
  o.kind = Kind::kTinyLfu;  // defaults: depth 4, 2 cells per slot: 4 x 2 x 128 / 64 = 16 blocks
  AdmissionFilter filter(o, 128, 32);
  EXPECT_EQ(filter.memory_bytes(), 32u * (16u * 64u + 4u));  // 1028 B per bucket of 128 slots
  filter.resize(64);
  EXPECT_EQ(filter.memory_bytes(), 64u * (16u * 64u + 4u));
  o.kind = Kind::kKCount;
  o.depth = 3;
  o.cells_per_slot = 1.0;  // 3 x 128 / 64 = 6 blocks: rounded up to 8
  EXPECT_EQ(AdmissionFilter(o, 128, 32).memory_bytes(), 32u * (8u * 64u + 4u));  // 516 B per bucket
  o.cells_per_slot = 0.01;                                                       // less than a block: one
  EXPECT_EQ(AdmissionFilter(o, 16, 2).memory_bytes(), 2u * (64u + 4u));
}

TEST(AdmissionOptions, ErrorsNameTheField) {
  const auto message = [](AdmissionOptions o) {
    try {
      check_admission_options(o);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  AdmissionOptions o;
  o.threshold_k = 16;
  EXPECT_NE(message(o).find("admission.threshold_k"), std::string::npos) << message(o);
  o = {};
  o.max_count = 0;
  EXPECT_NE(message(o).find("admission.max_count"), std::string::npos) << message(o);
  o = {};
  o.depth = 9;
  EXPECT_NE(message(o).find("admission.depth"), std::string::npos) << message(o);
  o = {};
  o.cells_per_slot = 0.0;
  EXPECT_NE(message(o).find("admission.cells_per_slot"), std::string::npos) << message(o);
  o = {};
  o.aging_factor = -1.0;
  EXPECT_NE(message(o).find("admission.aging_factor"), std::string::npos) << message(o);
  TableOptions t;
  t.dim = 4;
  t.max_capacity = 128;
  t.bucket_capacity = 16;
  t.admission.depth = 0;
  EXPECT_THROW(HostTable{t}, InputError);
}

TableOptions table_options(Kind kind) {
  TableOptions o;
  o.dim = 2;
  o.bucket_capacity = 16;
  o.max_capacity = 16;  // one bucket
  o.max_load_factor = 1.0;
  o.score_strategy = ScoreStrategy::kStep;
  o.initializer.mode = InitializerMode::kDebug;
  o.admission = options_of(kind);
  o.admission.threshold_k = 2;
  return o;
}

TEST(HostTableAdmission, KeptOutKeysAreCountedAndReadTheInitializer) {
  HostTable table(table_options(Kind::kKCount));
  const std::vector<std::uint64_t> keys{5, 6};
  std::vector<float> out(4, -1.0f);
  std::vector<std::uint8_t> founds(2, 9);
  CallStats st = table.find_or_insert(keys, out, founds);
  EXPECT_EQ(st.not_admitted, 2);
  EXPECT_EQ(st.inserted, 0);
  EXPECT_EQ(st.refused, 0);
  EXPECT_EQ(founds, (std::vector<std::uint8_t>{0, 0}));
  std::vector<float> want(4);
  initial_row(table.options().initializer, 0, 16, 5, 2, std::span<float>(want).first(2));
  initial_row(table.options().initializer, 0, 16, 6, 2, std::span<float>(want).last(2));
  EXPECT_EQ(out, want);
  EXPECT_EQ(table.size(), 0);
  st = table.find_or_insert(keys, out, founds);  // the second sighting
  EXPECT_EQ(st.inserted, 2);
  EXPECT_EQ(table.size(), 2);
  // An upsert of a first-seen key drops its value; restore puts entries back regardless.
  const std::vector<std::uint64_t> other{7};
  const std::vector<float> row{1.0f, 2.0f};
  st = table.insert_or_assign(other, row);
  EXPECT_EQ(st.not_admitted, 1);
  EXPECT_EQ(table.size(), 2);
  const std::vector<std::uint64_t> restored{8};
  const std::vector<std::uint64_t> score{3};
  st = table.restore(restored, row, score);
  EXPECT_EQ(st.inserted, 1);
  EXPECT_EQ(st.not_admitted, 0);
  // clear() forgets the sightings: 5 is new again.
  table.clear();
  st = table.find_or_insert(std::vector<std::uint64_t>{5}, std::span<float>(out).first(2));
  EXPECT_EQ(st.not_admitted, 1);
}

TEST(HostTableAdmission, TinyLfuKeepsTheFrequentKeysOfAFullBucket) {
  TableOptions o = table_options(Kind::kTinyLfu);
  o.admission.cells_per_slot = 16.0;  // wide rows: no scan key shares all four cells with a regular
  HostTable table(o);
  std::vector<std::uint64_t> regulars(16);
  for (std::uint64_t k = 0; k < 16; ++k) regulars[k] = k;
  std::vector<float> out(2 * 16);
  for (int round = 0; round < 3; ++round) table.find_or_insert(regulars, out);
  EXPECT_EQ(table.size(), 16);
  // A scan of one-hit wonders: each would evict the least recently used regular without a filter.
  std::vector<std::uint64_t> scan(64);
  for (std::uint64_t k = 0; k < 64; ++k) scan[k] = 1000 + k;
  std::vector<float> scan_rows(2 * 64);
  const CallStats st = table.find_or_insert(scan, scan_rows);
  EXPECT_EQ(st.not_admitted, 64);
  EXPECT_EQ(st.evicted, 0);
  std::vector<std::uint8_t> present(16);
  table.contains(regulars, present);
  EXPECT_EQ(present, std::vector<std::uint8_t>(16, 1));
}

// FREQUENCY (kv/score_rules.hpp): a new key scores the filter's estimate of it, its sighting
// included; a hit adds 1; the sighting that ages the bucket's bank halves every score of the
// bucket with it.
TEST(HostTableAdmission, FrequencyScoresStartAtTheEstimateAndHalveWithTheBank) {
  TableOptions o = table_options(Kind::kKCount);  // one bucket of 16 slots
  o.score_strategy = ScoreStrategy::kFrequency;
  o.admission.threshold_k = 3;
  o.admission.aging_factor = 2.0;     // the bank halves at its 32nd sighting
  o.admission.cells_per_slot = 16.0;  // 16 blocks: keys 5 and 6 share no counter
  HostTable table(o);
  std::vector<float> rows(2 * 2);
  const auto call = [&](std::vector<std::uint64_t> keys) {
    return table.find_or_insert(keys, std::span<float>(rows).first(2 * keys.size()));
  };
  const auto score_of = [&](std::uint64_t key) {
    std::vector<float> out(2);
    std::vector<std::uint8_t> found(1);
    std::vector<std::uint64_t> score(1);
    table.find(std::vector<std::uint64_t>{key}, out, found, score);
    EXPECT_EQ(found[0], 1) << key;
    return score[0];
  };
  EXPECT_EQ(call({5}).not_admitted, 1);
  EXPECT_EQ(call({5}).not_admitted, 1);
  const CallStats st = call({5, 6});  // 5's third sighting: admitted; 6's first
  EXPECT_EQ(st.inserted, 1);
  EXPECT_EQ(st.not_admitted, 1);
  EXPECT_EQ(score_of(5), 3u) << "the estimate, not 1 as under LFU";
  call({6});
  call({6});
  EXPECT_EQ(score_of(6), 3u);
  for (int i = 0; i < 25; ++i) call({5});  // sightings 7 .. 31
  EXPECT_EQ(score_of(5), 28u);
  EXPECT_EQ(table.admission_estimate(5), 28);
  call({5});  // the 32nd: 29, then the bank and the bucket halve
  EXPECT_EQ(score_of(5), 14u);
  EXPECT_EQ(score_of(6), 1u);
  EXPECT_EQ(table.admission_estimate(5), 14);
  EXPECT_EQ(table.admission_estimate(6), 1);
}

TEST(HostTableAdmission, FrequencyNeedsAFilter) {
  TableOptions o = table_options(Kind::kNone);
  o.score_strategy = ScoreStrategy::kFrequency;
  try {
    HostTable table(o);
    ADD_FAILURE() << "FREQUENCY without an admission filter was accepted";
  } catch (const InputError& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("score_strategy"), std::string::npos) << message;
    EXPECT_NE(message.find("admission.kind"), std::string::npos) << message;
  }
}

// Zipf(s) over n ranks by the inverse of its cumulative distribution.
class ZipfSampler {
 public:
  ZipfSampler(std::size_t n, double s) : cdf_(n) {
    double sum = 0.0;
    for (std::size_t r = 0; r < n; ++r) cdf_[r] = (sum += 1.0 / std::pow(static_cast<double>(r + 1), s));
    for (auto& c : cdf_) c /= sum;
  }
  std::uint64_t operator()(std::mt19937_64& rng) const {
    const double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng);
    return static_cast<std::uint64_t>(std::lower_bound(cdf_.begin(), cdf_.end(), u) - cdf_.begin());
  }

 private:
  std::vector<double> cdf_;
};

double zipf_hit_rate(AdmissionOptions admission, ScoreStrategy strategy = ScoreStrategy::kStep,
                     std::size_t batch = 100) {
  TableOptions o;
  o.dim = 4;
  o.bucket_capacity = 128;
  o.max_capacity = 4096;
  o.init_capacity = 4096;
  o.max_load_factor = 1.0;
  o.score_strategy = strategy;
  o.initializer.mode = InitializerMode::kConstant;
  o.admission = admission;
  HostTable table(o);
  const ZipfSampler zipf(1'000'000, 1.0);
  std::mt19937_64 rng(2026);
  constexpr std::size_t kAccesses = 200'000;
  const std::size_t kBatch = batch;
  std::vector<std::uint64_t> keys(kBatch);
  std::vector<float> rows(kBatch * 4);
  std::vector<std::uint8_t> founds(kBatch);
  std::int64_t hits = 0;
  for (std::size_t at = 0; at < kAccesses; at += kBatch) {
    for (auto& k : keys) k = mix64(zipf(rng) + 1);  // ranks scattered over the buckets
    for (auto& k : keys)
      if (k >= kFirstReservedKey) k = 0;  // (a reserved value: never in practice)
    table.find_or_insert(keys, rows, founds);
    hits += std::count(founds.begin(), founds.end(), std::uint8_t{1});
  }
  return static_cast<double>(hits) / static_cast<double>(kAccesses);
}

// The default filters (k = 2; 15-counts, 4 rows of 2 cells per slot, aging at 10x the slots)
// under LRU-like (STEP) and LFU scores. Bucket-local LRU already keeps much of the head; the best
// any policy could do here is about 0.62 (the 4096 most frequent keys hold that much mass).
TEST(AdmissionStudy, FiltersRaiseTheHitRateOfAZipfStream) {
  AdmissionOptions none, k_count_options, tiny_lfu_options;
  k_count_options.kind = Kind::kKCount;
  tiny_lfu_options.kind = Kind::kTinyLfu;
  for (const auto strategy : {ScoreStrategy::kStep, ScoreStrategy::kLfu}) {
    const double none_rate = zipf_hit_rate(none, strategy);
    const double k_count = zipf_hit_rate(k_count_options, strategy);
    const double tiny_lfu = zipf_hit_rate(tiny_lfu_options, strategy);
    std::printf(
        "Zipf s=1.0 over 1e6 keys, 2e5 accesses in batches of 100, 4096 slots (buckets of 128), %s "
        "scores: hit rate none %.3f, k_count %.3f, tiny_lfu %.3f\n",
        to_string(strategy).c_str(), none_rate, k_count, tiny_lfu);
    EXPECT_GT(k_count, none_rate + 0.008) << to_string(strategy);
    EXPECT_GT(tiny_lfu, none_rate + 0.03) << to_string(strategy);
  }
}

}  // namespace
}  // namespace embscale::kv
