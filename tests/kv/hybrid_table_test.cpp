// HybridTable: each tier must be exactly a HostTable of that tier's options fed the keys placed
// there, in input order: checked against two reference models (reference_table.hpp) built
// from the tiers' options, on randomized batches with fixed seeds where both tiers grow, evict
// and refuse. The byte budget holds, the slow tier's rows are in a file, and the placement
// sends about fast_share of the keys to memory.
#include "kv/hybrid_table.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <tuple>

#include "core/error.hpp"
#include "reference_table.hpp"

namespace embscale::kv {
namespace {

using testing::ReferenceTable;

TableOptions table_options(ScoreStrategy strategy) {
  TableOptions o;
  o.dim = 4;
  o.bucket_capacity = 16;
  o.init_capacity = 64;
  o.max_capacity = 512;
  o.max_load_factor = 0.75;
  o.score_strategy = strategy;
  o.seed = 5;
  return o;
}

HybridOptions quarter_in_memory() {
  // 128 rows of 4 floats: a quarter of the 512 slots.
  return {128 * 4 * 4, std::filesystem::temp_directory_path().string()};
}

// (strategy, admission filter): each tier has its own filter, as its own HostTable would.
class HybridVsReferences : public ::testing::TestWithParam<std::tuple<ScoreStrategy, AdmissionOptions::Kind>> {};

TEST_P(HybridVsReferences, EachTierIsItsOwnTableFedItsKeysInOrder) {
  const auto [strategy, kind] = GetParam();
  TableOptions options = table_options(strategy);
  options.admission.kind = kind;
  HybridTable table(options, quarter_in_memory());
  EXPECT_DOUBLE_EQ(table.fast_share(), 0.25);
  EXPECT_LE(table.fast().options().max_capacity * table.row_width() * 4, quarter_in_memory().fast_row_bytes);
  ReferenceTable fast_ref(table.fast().options()), slow_ref(table.slow().options());
  std::mt19937_64 rng(17 + static_cast<int>(strategy));
  const auto w = static_cast<std::size_t>(table.row_width());
  CallStats seen;
  for (int call = 0; call < 300; ++call) {
    const std::size_t n = 1 + rng() % 40;
    std::vector<std::uint64_t> keys(n), scores(n);
    std::vector<float> values(n * w);
    for (auto& k : keys) k = rng() % 2000;
    for (auto& s : scores) s = rng() % 60;
    for (auto& v : values) v = static_cast<float>(rng() % 1000) / 8.0f;
    // The split the semantics define: placement by in_fast_tier, input order kept.
    std::vector<std::uint64_t> fk, sk, fs, ss;
    std::vector<float> fv, sv;
    for (std::size_t i = 0; i < n; ++i) {
      const bool fast = table.in_fast_tier(keys[i]);
      (fast ? fk : sk).push_back(keys[i]);
      (fast ? fs : ss).push_back(scores[i]);
      (fast ? fv : sv)
          .insert((fast ? fv : sv).end(), values.begin() + static_cast<long>(i * w),
                  values.begin() + static_cast<long>((i + 1) * w));
    }
    const bool custom = strategy == ScoreStrategy::kCustomized;
    CallStats got, want;
    switch (rng() % 3) {
      case 0:
        got = table.insert_or_assign(
            keys, values, custom ? std::span<const std::uint64_t>(scores) : std::span<const std::uint64_t>());
        if (!fk.empty()) want += fast_ref.upsert(fk, fv, custom ? fs : std::vector<std::uint64_t>{}, nullptr);
        if (!sk.empty()) want += slow_ref.upsert(sk, sv, custom ? ss : std::vector<std::uint64_t>{}, nullptr);
        break;
      case 1: {
        std::vector<float> out(n * w);
        std::vector<std::uint8_t> founds(n);
        got = table.find_or_insert(keys, out, founds);
        std::vector<float> fo, so;
        std::vector<std::uint8_t> ff, sf;
        if (!fk.empty()) want += fast_ref.find_or_insert(fk, fo, ff, {});
        if (!sk.empty()) want += slow_ref.find_or_insert(sk, so, sf, {});
        std::size_t a = 0, b = 0;
        for (std::size_t i = 0; i < n; ++i) {
          const bool fast = table.in_fast_tier(keys[i]);
          const auto& src = fast ? fo : so;
          const std::size_t j = fast ? a++ : b++;
          ASSERT_EQ(founds[i], (fast ? ff : sf)[j]) << "key " << keys[i];
          for (std::size_t d = 0; d < w; ++d) ASSERT_EQ(out[i * w + d], src[j * w + d]) << "key " << keys[i];
        }
        break;
      }
      default:
        got = table.erase(keys);
        if (!fk.empty()) want += fast_ref.erase(fk);
        if (!sk.empty()) want += slow_ref.erase(sk);
    }
    ASSERT_EQ(got.found, want.found) << "call " << call;
    ASSERT_EQ(got.inserted, want.inserted) << "call " << call;
    ASSERT_EQ(got.evicted, want.evicted) << "call " << call;
    ASSERT_EQ(got.refused, want.refused) << "call " << call;
    ASSERT_EQ(got.not_admitted, want.not_admitted) << "call " << call;
    ASSERT_EQ(table.fast().size(), fast_ref.size());
    ASSERT_EQ(table.slow().size(), slow_ref.size());
    seen += got;
  }
  EXPECT_GT(seen.evicted, 0) << "no tier ever evicted";
  if (kind != AdmissionOptions::Kind::kNone) {
    EXPECT_GT(seen.not_admitted, 0) << "the filters never kept a key out";
  }
  // Contents: every key of the space, with its score.
  std::vector<std::uint64_t> all(2000), scores(2000);
  for (std::uint64_t k = 0; k < all.size(); ++k) all[k] = k;
  std::vector<float> out(all.size() * w);
  std::vector<std::uint8_t> founds(all.size());
  table.find(all, out, founds, scores);
  std::int64_t in_fast = 0;
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto* e = table.in_fast_tier(k) ? fast_ref.lookup(k) : slow_ref.lookup(k);
    ASSERT_EQ(founds[k], e != nullptr) << k;
    in_fast += table.in_fast_tier(k);
    if (!e) continue;
    EXPECT_EQ(scores[k], e->score) << k;
    EXPECT_EQ(std::vector<float>(out.begin() + static_cast<long>(k * w), out.begin() + static_cast<long>((k + 1) * w)),
              e->row)
        << k;
  }
  // About a quarter of the key space is placed in memory (binomial: 5 standard deviations).
  const double sd = std::sqrt(2000 * 0.25 * 0.75);
  EXPECT_NEAR(static_cast<double>(in_fast), 500.0, 5 * sd);
}

INSTANTIATE_TEST_SUITE_P(
    StrategiesAndFilters, HybridVsReferences,
    ::testing::Combine(::testing::Values(ScoreStrategy::kStep, ScoreStrategy::kLfu, ScoreStrategy::kCustomized),
                       ::testing::Values(AdmissionOptions::Kind::kNone, AdmissionOptions::Kind::kKCount,
                                         AdmissionOptions::Kind::kTinyLfu)),
    [](const auto& p) { return to_string(std::get<0>(p.param)) + "_" + to_string(std::get<1>(p.param)); });

TEST(HybridTable, ABudgetBelowOneBucketOrWithoutASlowDirectoryIsRefused) {
  EXPECT_THROW(HybridTable(table_options(ScoreStrategy::kStep), {4 * 4 * 8, "/tmp"}), InputError);
  EXPECT_THROW(HybridTable(table_options(ScoreStrategy::kStep), {128 * 4 * 4, ""}), InputError);
  const HybridTable all_fast(table_options(ScoreStrategy::kStep), {1 << 20, ""});
  EXPECT_DOUBLE_EQ(all_fast.fast_share(), 1.0);
}

}  // namespace
}  // namespace embscale::kv
