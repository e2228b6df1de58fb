// CachingTable: a small fast tier in front of an ample slow tier must behave as one dictionary
// that never loses a key: checked against a std::map on randomized batches with fixed seeds,
// with the slow tier a real memory-mapped file (MappedStorage) or a real RocksDB database
// (RocksDbStorage) in a scratch directory. The tiers must really be used:
// demotions, promotions and refused newcomers all happen; with an admission filter, newcomers
// the fast tier keeps out go to the slow tier and are not lost either.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "kv/caching_table.hpp"
#include "kv/initializer.hpp"
#include "kv/mapped_storage.hpp"
#include "kv/rocksdb_storage.hpp"

namespace embscale::kv {
namespace {

constexpr std::int64_t kDim = 4;

TableOptions fast_options(ScoreStrategy strategy) {
  TableOptions o;
  o.dim = kDim;
  o.bucket_capacity = 16;
  o.init_capacity = 64;
  o.max_capacity = 128;  // the fast tier holds ~1/10 of the keys
  o.score_strategy = strategy;
  o.seed = 11;
  return o;
}

class ScratchDir {
 public:
  ScratchDir() : path_(std::filesystem::temp_directory_path() / ("embscale-tier-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() { std::filesystem::remove_all(path_); }
  std::string str() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

enum class SlowTier { kMapped, kRocksDb };

std::unique_ptr<Storage> make_slow_tier(SlowTier kind, const ScratchDir& dir) {
  if (kind == SlowTier::kMapped) return std::make_unique<MappedStorage>(kDim, 1 << 13, dir.str(), 16);
  return std::make_unique<RocksDbStorage>(std::filesystem::path(dir.str()) / "slow", kDim);
}

class CachingTableVsDictionary
    : public ::testing::TestWithParam<std::tuple<ScoreStrategy, SlowTier, AdmissionOptions::Kind>> {};

TEST_P(CachingTableVsDictionary, NeverLosesAKeyAndReadsTheLatestRow) {
  const ScratchDir dir;
  const auto [strategy, slow_kind, admission] = GetParam();
  TableOptions options = fast_options(strategy);
  options.admission.kind = admission;
  CachingTable table(options, make_slow_tier(slow_kind, dir));
  const TableOptions& o = table.fast().options();  // num_embeddings resolved
  std::map<std::uint64_t, std::vector<float>> oracle;
  std::mt19937_64 rng(99 + static_cast<int>(strategy));
  const auto w = static_cast<std::size_t>(kDim);

  for (int call = 0; call < 300; ++call) {
    const std::size_t n = 1 + rng() % 32;
    std::vector<std::uint64_t> keys(n);
    // Skewed: a hot range that stays in the fast tier and a cold tail that cycles through it.
    for (auto& k : keys) k = rng() % 3 ? rng() % 100 : rng() % 1200;
    const int op = static_cast<int>(rng() % 4);
    SCOPED_TRACE("call " + std::to_string(call) + " op " + std::to_string(op));
    if (op == 0) {
      std::vector<float> values(n * w);
      for (auto& v : values) v = static_cast<float>(rng() % 1000);
      table.insert_or_assign(keys, values);
      for (std::size_t i = 0; i < n; ++i)
        oracle[keys[i]].assign(values.begin() + static_cast<long>(i * w),
                               values.begin() + static_cast<long>((i + 1) * w));
    } else if (op == 1 || op == 2) {
      std::vector<float> out(n * w, -1.0f);
      std::vector<std::uint8_t> founds(n);
      std::map<std::uint64_t, std::vector<float>> before = oracle;
      table.find_or_insert(keys, out, founds);
      for (std::size_t i = 0; i < n; ++i) {
        auto it = oracle.find(keys[i]);
        if (it == oracle.end()) {
          std::vector<float> row(w);
          initial_row(o.initializer, o.seed, o.num_embeddings, keys[i], o.dim, row);
          it = oracle.emplace(keys[i], row).first;
        }
        const std::vector<float> got(out.begin() + static_cast<long>(i * w),
                                     out.begin() + static_cast<long>((i + 1) * w));
        ASSERT_EQ(got, it->second) << "key " << keys[i];
        bool earlier = false;
        for (std::size_t j = 0; j < i; ++j) earlier |= keys[j] == keys[i];
        ASSERT_EQ(founds[i], before.contains(keys[i]) || earlier) << "key " << keys[i];
      }
    } else {
      const std::int64_t expected = [&] {
        std::int64_t e = 0;
        std::set<std::uint64_t> distinct(keys.begin(), keys.end());
        for (const auto k : distinct) e += oracle.erase(k);
        return e;
      }();
      EXPECT_EQ(table.erase(keys).found, expected);
    }
    ASSERT_EQ(table.size(), static_cast<std::int64_t>(oracle.size()));
    ASSERT_LE(table.fast().size(), 128);
  }
  // Every key of the space: found exactly when the dictionary has it, with its row.
  std::vector<std::uint64_t> all(1200);
  for (std::uint64_t k = 0; k < all.size(); ++k) all[k] = k;
  std::vector<float> out(all.size() * w);
  std::vector<std::uint8_t> founds(all.size());
  table.find(all, out, founds);
  for (std::size_t k = 0; k < all.size(); ++k) {
    const auto it = oracle.find(k);
    ASSERT_EQ(founds[k], it != oracle.end()) << k;
    if (it != oracle.end()) {
      EXPECT_EQ(
          std::vector<float>(out.begin() + static_cast<long>(k * w), out.begin() + static_cast<long>((k + 1) * w)),
          it->second)
          << k;
    }
  }
  const TierCounters& c = table.counters();
  EXPECT_GT(c.demoted, 0);
  EXPECT_GT(c.promoted, 0);
  EXPECT_GT(c.slow_hits, 0);
  EXPECT_EQ(c.slow_dropped, 0) << "the slow tier is ample";
  EXPECT_GT(table.slow().size(), table.fast().size()) << "most keys should live in the slow tier";
  if (strategy == ScoreStrategy::kLfu) {
    EXPECT_GT(c.slow_writes, 0) << "warm buckets refuse LFU newcomers";
  }
  if (admission != AdmissionOptions::Kind::kNone) {
    EXPECT_GT(c.slow_writes, 0) << "newcomers the filter keeps out are written to the slow tier";
  }
}

INSTANTIATE_TEST_SUITE_P(
    StrategiesAndSlowTiers, CachingTableVsDictionary,
    ::testing::Combine(::testing::Values(ScoreStrategy::kStep, ScoreStrategy::kLfu, ScoreStrategy::kTimestamp),
                       ::testing::Values(SlowTier::kMapped, SlowTier::kRocksDb),
                       ::testing::Values(AdmissionOptions::Kind::kNone, AdmissionOptions::Kind::kKCount,
                                         AdmissionOptions::Kind::kTinyLfu)),
    [](const auto& p) {
      const std::string admission =
          std::get<2>(p.param) == AdmissionOptions::Kind::kNone ? "" : "_" + to_string(std::get<2>(p.param));
      return to_string(std::get<0>(p.param)) + (std::get<1>(p.param) == SlowTier::kMapped ? "_mapped" : "_rocksdb") +
             admission;
    });

TEST(CachingTable, ADemotedKeyKeepsItsScore) {
  const ScratchDir dir;
  TableOptions options = fast_options(ScoreStrategy::kLfu);
  options.max_capacity = options.init_capacity = 16;  // one bucket
  CachingTable table(options, std::make_unique<MappedStorage>(kDim, 1024, dir.str(), 16));
  std::vector<float> rows(kDim);
  const std::vector<std::uint64_t> hot{7};
  std::vector<std::uint8_t> founds(1);
  for (int i = 0; i < 5; ++i) table.find_or_insert(hot, rows, founds);  // score 5
  // 16 keys touched 9 times each push key 7 (score 5) out of the one bucket.
  std::vector<std::uint64_t> others(16);
  for (std::uint64_t k = 0; k < 16; ++k) others[k] = 100 + k;
  std::vector<float> many(others.size() * kDim);
  std::vector<std::uint8_t> many_founds(others.size());
  for (int i = 0; i < 9; ++i) table.find_or_insert(others, many, many_founds);
  std::vector<std::uint64_t> score(1);
  table.find(hot, rows, founds, score);
  ASSERT_EQ(founds[0], 1);
  EXPECT_EQ(score[0], 5u) << "demoted with its LFU count";
  EXPECT_GE(table.counters().demoted, 1);
}

}  // namespace
}  // namespace embscale::kv
