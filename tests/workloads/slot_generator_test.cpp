#include "workloads/slot_generator.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "core/error.hpp"
#include "tests/workloads/goodness_of_fit.hpp"

namespace embscale::workloads {
namespace {

constexpr std::uint64_t kSeed = 2024;
constexpr Key kOffset = 1000;

std::vector<Key> bag(const SlotGenerator& gen, std::uint64_t stream, std::int64_t iteration = 0) {
  std::vector<Key> keys;
  gen.append_bag(*gen.sampler_at(iteration), stream, keys);
  return keys;
}

config::SlotWorkload workload(config::KeyDistribution d, std::int64_t nnz) {
  config::SlotWorkload w;
  w.keys.distribution = d;
  w.keys.zipf_alpha = 1.2;
  w.nnz = nnz;
  return w;
}

TEST(SlotGenerator, FixedBagsHoldNnzKeysOfTheSlot) {
  const SlotGenerator gen(workload(config::KeyDistribution::kZipf, 5), 300, kOffset, kSeed, 2);
  for (std::uint64_t stream = 0; stream < 200; ++stream) {
    const auto keys = bag(gen, stream);
    ASSERT_EQ(keys.size(), 5u);
    for (const Key k : keys) {
      EXPECT_GE(k, kOffset);
      EXPECT_LT(k, kOffset + 300);
    }
    EXPECT_EQ(keys, bag(gen, stream)) << "a bag is a pure function of its stream";
  }
  EXPECT_NE(bag(gen, 1), bag(gen, 2));
}

TEST(SlotGenerator, UniformBagSizesCoverNnzMinToNnz) {
  auto w = workload(config::KeyDistribution::kUniform, 6);
  w.nnz_distribution = config::NnzDistribution::kUniform;
  for (const std::int64_t min : {0, 1, 4}) {
    w.nnz_min = min;
    const SlotGenerator gen(w, 1000, 0, kSeed, 0);
    std::vector<std::int64_t> counts(7, 0);
    for (std::uint64_t stream = 0; stream < 30000; ++stream)
      ++counts[static_cast<std::size_t>(bag(gen, stream).size())];
    std::vector<double> p(7, 0.0);
    for (std::int64_t s = min; s <= 6; ++s) p[static_cast<std::size_t>(s)] = 1.0 / static_cast<double>(7 - min);
    for (std::int64_t s = 0; s < min; ++s) EXPECT_EQ(counts[static_cast<std::size_t>(s)], 0);
    const auto fit = testing::chi_square(counts, p);
    EXPECT_TRUE(fit.passes()) << "nnz_min " << min << ": " << fit.report();
  }
}

// DLRM's lengths: round(max(1, u L')) with L' = min(N, L): 1 has 1.5/L', L' has 0.5/L'.
TEST(SlotGenerator, DlrmBagSizes) {
  auto w = workload(config::KeyDistribution::kDlrmUniform, 10);
  w.nnz_distribution = config::NnzDistribution::kDlrm;
  for (const std::uint64_t space : {std::uint64_t{1000}, std::uint64_t{6}}) {
    const SlotGenerator gen(w, space, 0, kSeed, 0);
    const double limit = static_cast<double>(std::min<std::uint64_t>(space, 10));
    std::vector<std::int64_t> counts(11, 0);
    for (std::uint64_t stream = 0; stream < 40000; ++stream)
      ++counts[static_cast<std::size_t>(gen.bag_size(stream, space))];
    std::vector<double> p(11, 0.0);
    for (int s = 1; s <= static_cast<int>(limit); ++s) p[static_cast<std::size_t>(s)] = 1.0 / limit;
    p[1] = 1.5 / limit;
    p[static_cast<std::size_t>(limit)] = 0.5 / limit;
    const auto fit = testing::chi_square(counts, p);
    EXPECT_TRUE(fit.passes()) << "space " << space << ": " << fit.report();
  }
}

// Removing repeats keeps the first of each key in the order drawn: the reference removes them
// from the bag the same stream gives without removal.
TEST(SlotGenerator, DedupIsTheStableUniqueOfTheSameDraws) {
  auto w = workload(config::KeyDistribution::kZipf, 12);
  w.keys.zipf_alpha = 1.5;
  const SlotGenerator any(w, 40, kOffset, kSeed, 1);
  w.bag_keys = config::BagKeys::kDedup;
  const SlotGenerator dedup(w, 40, kOffset, kSeed, 1);
  std::size_t shrunk = 0;
  for (std::uint64_t stream = 0; stream < 500; ++stream) {
    std::vector<Key> expected;
    for (const Key k : bag(any, stream))
      if (std::find(expected.begin(), expected.end(), k) == expected.end()) expected.push_back(k);
    const auto keys = bag(dedup, stream);
    EXPECT_EQ(keys, expected);
    shrunk += keys.size() < 12;
  }
  EXPECT_GT(shrunk, 100u) << "a skewed slot of 40 keys repeats keys in bags of 12";
}

TEST(RemoveRepeats, LongBagsThroughTheHashSet) {
  std::vector<Key> keys = {7, 7};
  for (Key k = 0; k < 300; ++k) keys.push_back(k % 97);
  remove_repeats(keys, 2);
  ASSERT_EQ(keys.size(), 2u + 97u);
  for (Key k = 0; k < 97; ++k) EXPECT_EQ(keys[static_cast<std::size_t>(k) + 2], k);
}

// Distinct bags are the first nnz distinct keys of the bag's stream of draws (FBGEMM keeps the
// first L distinct of its oversampled draws): a fixed bag of many draws on the same stream is
// the reference.
TEST(SlotGenerator, DistinctBagsAreTheFirstDistinctDraws) {
  auto w = workload(config::KeyDistribution::kFbgemmZipf, 2000);
  w.keys.zipf_alpha = 1.3;
  const SlotGenerator stream_of_draws(w, 500, 0, kSeed, 3);
  for (const std::int64_t nnz : {8, 100}) {
    w.nnz = nnz;
    w.bag_keys = config::BagKeys::kDistinct;
    const SlotGenerator distinct(w, 500, 0, kSeed, 3);
    for (std::uint64_t stream = 0; stream < 50; ++stream) {
      std::vector<Key> expected;
      for (const Key k : bag(stream_of_draws, stream))
        if (std::find(expected.begin(), expected.end(), k) == expected.end() &&
            expected.size() < static_cast<std::size_t>(nnz))
          expected.push_back(k);
      EXPECT_EQ(bag(distinct, stream), expected) << "nnz " << nnz << ", stream " << stream;
    }
  }
}

TEST(SlotGenerator, DistinctBagsThatCannotFillFailClearly) {
  auto w = workload(config::KeyDistribution::kZipf, 3);
  w.keys.zipf_alpha = 100.0;  // the third key has probability 3^-100
  w.bag_keys = config::BagKeys::kDistinct;
  const SlotGenerator gen(w, 3, 0, kSeed, 0);
  try {
    bag(gen, 0);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(
        std::string(e.what()).find("slot 0 (3 keys now): bag_keys \"distinct\" drew 196608 keys without finding 3 "
                                   "distinct ones"),
        std::string::npos)
        << e.what();
  }
}

// MLPerf's multi-hot: the bag of a first key is always the same; its first key follows the slot's
// distribution, its companions the companion distribution (uniform, or Lomax(a) floored mod N).
TEST(SlotGenerator, MultiHotCompanionsAreAFunctionOfTheFirstKey) {
  auto w = workload(config::KeyDistribution::kZipf, 6);
  w.keys.zipf_alpha = 1.4;
  w.multi_hot.companions = config::Companions::kPareto;
  const std::uint64_t n = 20;
  const SlotGenerator gen(w, n, 0, kSeed, 4);
  std::map<Key, std::vector<Key>> bag_of_first;
  std::set<Key> first_keys_seen;
  for (std::uint64_t stream = 0; stream < 20000; ++stream) {
    const auto keys = bag(gen, stream);
    ASSERT_EQ(keys.size(), 6u);
    const auto [it, inserted] = bag_of_first.emplace(keys.front(), keys);
    EXPECT_EQ(it->second, keys) << "first key " << keys.front();
    first_keys_seen.insert(keys.front());
  }
  EXPECT_EQ(first_keys_seen.size(), n);
  // 20 rows of 5 companions are too few for a fit: the companions of 20000 distinct first keys of a
  // slot of 10^6 keys, each row counted once (rows are independent, a row's repeats are not).
  auto wide = w;
  wide.keys.distribution = config::KeyDistribution::kUniform;
  const std::uint64_t rows = 1000000;
  const SlotGenerator many(wide, rows, 0, kSeed, 4);
  std::vector<std::int64_t> folded(n, 0);
  std::set<Key> firsts;
  for (std::uint64_t stream = 0; firsts.size() < 20000; ++stream) {
    const auto keys = bag(many, stream);
    if (!firsts.insert(keys.front()).second) continue;
    for (std::size_t j = 1; j < keys.size(); ++j) ++folded[static_cast<std::size_t>(keys[j] % static_cast<Key>(n))];
  }
  // floor(Lomax) = m with probability (1 + m)^-a - (2 + m)^-a; folded mod `rows` and then mod n
  // (rows is a multiple of n): the progression sums of m = r, r + n, ... to 10^7, the rest spread
  // evenly (its unevenness is below 10^-9).
  const double a = w.multi_hot.pareto_alpha;
  std::vector<double> p(n, 0.0);
  double assigned = 0.0;
  for (std::uint64_t m = 0; m < 10000000; ++m) {
    const double pm = std::pow(1.0 + static_cast<double>(m), -a) - std::pow(2.0 + static_cast<double>(m), -a);
    p[m % n] += pm;
    assigned += pm;
  }
  for (auto& q : p) q += (1.0 - assigned) / static_cast<double>(n);
  const auto fit = testing::chi_square(folded, p);
  EXPECT_TRUE(fit.passes()) << fit.report();
}

TEST(SlotGenerator, PermutationMapsIndicesThroughTheKeyedBijection) {
  auto w = workload(config::KeyDistribution::kZipf, 4);
  const SlotGenerator identity(w, 1000, kOffset, kSeed, 5);
  w.mapping = config::KeyMapping::kPermutation;
  const SlotGenerator permuted(w, 1000, kOffset, kSeed, 5);
  std::set<Key> differ;
  for (std::uint64_t stream = 0; stream < 300; ++stream) {
    const auto plain = bag(identity, stream);
    const auto mapped = bag(permuted, stream);
    ASSERT_EQ(plain.size(), mapped.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
      ASSERT_GE(mapped[i], kOffset);
      ASSERT_LT(mapped[i], kOffset + 1000);
      if (plain[i] != mapped[i]) differ.insert(plain[i]);
    }
  }
  EXPECT_GT(differ.size(), 10u);
  // Same index, same key: the mapping is a function, and it is injective (a bijection of 1000).
  std::map<Key, Key> image;
  for (std::uint64_t stream = 0; stream < 300; ++stream) {
    const auto plain = bag(identity, stream);
    const auto mapped = bag(permuted, stream);
    for (std::size_t i = 0; i < plain.size(); ++i) {
      const auto [it, inserted] = image.emplace(plain[i], mapped[i]);
      EXPECT_EQ(it->second, mapped[i]);
    }
  }
  std::set<Key> targets;
  for (const auto& [from, to] : image) targets.insert(to);
  EXPECT_EQ(targets.size(), image.size());
}

// append_bags against its reference, append_bag one bag at a time: the same keys and sizes for
// every key distribution, bag size rule, bag key rule, companions and mapping, with drift (a
// rotated Zipf) and newest-hot growth (a mirrored one), over groups larger than one draw_each.
TEST(SlotGenerator, AppendBagsGivesTheKeysOfAppendBag) {
  using config::KeyDistribution;
  std::vector<config::SlotWorkload> cases;
  for (const auto d :
       {KeyDistribution::kUniform, KeyDistribution::kZipf, KeyDistribution::kHotspot, KeyDistribution::kHugeCtrPowerLaw,
        KeyDistribution::kFbgemmZipf, KeyDistribution::kDlrmUniform, KeyDistribution::kTorchrecUniform})
    cases.push_back(workload(d, 5));
  auto add = [&](auto change) {
    auto w = workload(KeyDistribution::kZipf, 7);
    change(w);
    cases.push_back(w);
  };
  add([](auto& w) { w.nnz_distribution = config::NnzDistribution::kUniform, w.nnz_min = 0; });
  add([](auto& w) { w.nnz_distribution = config::NnzDistribution::kDlrm; });
  add([](auto& w) { w.bag_keys = config::BagKeys::kDedup, w.keys.zipf_alpha = 2.0; });
  add([](auto& w) { w.bag_keys = config::BagKeys::kDistinct; });
  add([](auto& w) { w.multi_hot.companions = config::Companions::kPareto; });
  add([](auto& w) { w.multi_hot.companions = config::Companions::kUniform; });
  add([](auto& w) { w.mapping = config::KeyMapping::kPermutation; });
  add([](auto& w) { w.keys.zipf_alpha = 0.0; });
  add([](auto& w) { w.drift.period = 3, w.drift.shift = 0.25, w.drift.mode = config::DriftMode::kGradual; });
  add([](auto& w) {
    w.growth.initial_keys = 20, w.growth.keys_per_iteration = 3, w.growth.hot = config::GrowthOrder::kNewestHot;
  });
  std::vector<std::uint64_t> streams;
  for (std::uint64_t b = 0; b < 5000; ++b) streams.push_back(b * 26 + 3);  // 26 slots, slot 3
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (const std::uint64_t space : {std::uint64_t{50}, std::uint64_t{1'000'000'000'000}, std::uint64_t{1} << 62}) {
      const SlotGenerator gen(cases[c], space, kOffset, kSeed, 3);
      const auto sampler = gen.sampler_at(7);
      std::vector<Key> want, got;
      std::vector<std::int64_t> want_sizes, sizes;
      for (const std::uint64_t stream : streams) {
        const std::size_t before = want.size();
        gen.append_bag(*sampler, stream, want);
        want_sizes.push_back(static_cast<std::int64_t>(want.size() - before));
      }
      gen.append_bags(*sampler, streams, got, sizes);
      ASSERT_EQ(sizes, want_sizes) << "case " << c << ", " << space << " keys";
      ASSERT_EQ(got, want) << "case " << c << ", " << space << " keys";
    }
}

// companions_of against companion() one at a time, at every SIMD level this CPU runs: Pareto
// shapes from the smallest allowed to 4, uniform companions in a space of 2^63 - 1 (where half the
// draws fall in Lemire's check zone and the exact path decides).
TEST(SlotGenerator, CompanionsOfIsCompanionOneAtATime) {
  std::vector<config::SlotWorkload> cases;
  for (const double alpha : {config::kMinParetoAlpha, 0.25, 1.0, 4.0}) {
    auto w = workload(config::KeyDistribution::kZipf, 8);
    w.multi_hot.companions = config::Companions::kPareto;
    w.multi_hot.pareto_alpha = alpha;
    cases.push_back(w);
  }
  auto uniform = workload(config::KeyDistribution::kZipf, 8);
  uniform.multi_hot.companions = config::Companions::kUniform;
  cases.push_back(uniform);
  std::vector<std::uint64_t> heads;
  std::vector<std::int64_t> positions;
  for (std::uint64_t i = 0; i < 3000; ++i)
    heads.push_back(i * 7919 % 1000), positions.push_back(1 + static_cast<std::int64_t>(i % 13));
  for (std::size_t c = 0; c < cases.size(); ++c)
    for (const std::uint64_t space : {std::uint64_t{1000}, std::uint64_t{std::numeric_limits<std::int64_t>::max()}}) {
      const SlotGenerator gen(cases[c], space, 0, kSeed, 1);
      std::vector<std::uint64_t> want(heads.size());
      for (std::size_t i = 0; i < heads.size(); ++i) want[i] = gen.companion(heads[i], positions[i]);
      for (const SimdLevel level : {SimdLevel::kBaseline, SimdLevel::kAvx2, SimdLevel::kAvx512}) {
        if (!cpu_runs(level)) continue;
        std::vector<std::uint64_t> got(heads.size());
        gen.companions_of(heads, positions, got, level);
        EXPECT_EQ(got, want) << "case " << c << ", " << space << " keys, " << simd_level_name(level);
      }
    }
}

}  // namespace
}  // namespace embscale::workloads
