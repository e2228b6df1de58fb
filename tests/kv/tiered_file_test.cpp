// Dump and load of the tiered tables (kv/tiered_file.hpp): a caching table (a small fast tier
// in front of a memory-mapped slow one) and a hybrid table, filled so that both tiers hold
// entries, dump both tiers' entries into one file that loads, every row and score exact, into a
// fresh tiered table of the same kind, into a HostKvTable, and from a HostKvTable's dump back.
// Rows are small integers (exact in fp16 too), scores the caller's (CUSTOMIZED).
#include <gtest/gtest.h>

#include <random>
#include <string>

#include "core/error.hpp"
#include "kv/mapped_storage.hpp"
#include "kv/table_file_testing.hpp"
#include "kv/tiered_file.hpp"

namespace embscale::kv {
namespace {

using testing::ScratchDir;
using testing::Snapshot;

TableOptions tier_options(ValueType type, std::int64_t max_capacity) {
  TableOptions o = testing::dump_options(type, /*training=*/true, max_capacity);  // dim 5 + 3 state values
  o.bucket_capacity = 16;
  o.init_capacity = max_capacity;
  return o;
}

// Every entry of a tiered table, as testing::snapshot gives a KvTable's.
template <class Tiered> Snapshot tiered_snapshot(const Tiered& table) {
  Snapshot out;
  const auto w = static_cast<std::size_t>(table.row_width());
  table.for_each_entry(
      [&](std::span<const std::uint64_t> keys, std::span<const float> values, std::span<const std::uint64_t> scores) {
        for (std::size_t i = 0; i < keys.size(); ++i)
          EXPECT_TRUE(out.emplace(keys[i], testing::Entry{scores[i],
                                                          {values.begin() + static_cast<long>(i * w),
                                                           values.begin() + static_cast<long>((i + 1) * w)}})
                          .second)
              << "key " << keys[i] << " in both tiers";
      });
  EXPECT_EQ(static_cast<std::int64_t>(out.size()), table.size());
  return out;
}

// 600 keys with integer rows and random scores, in batches.
template <class Tiered> void fill(Tiered& table, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto w = static_cast<std::size_t>(table.row_width());
  for (int batch = 0; batch < 12; ++batch) {
    std::vector<std::uint64_t> keys(50), scores(50);
    std::vector<float> values(50 * w);
    for (auto& k : keys) k = rng() % 100000;
    for (auto& s : scores) s = 1 + rng() % 100000;
    for (auto& v : values) v = static_cast<float>(static_cast<int>(rng() % 2001) - 1000);
    table.insert_or_assign(keys, values, scores);
  }
}

class TieredFile : public ::testing::TestWithParam<ValueType> {};

TEST_P(TieredFile, ACachingTableDumpLoadsIntoEitherKindOfTableUnchanged) {
  const ScratchDir dir("tiered_caching");
  const TableOptions fast = tier_options(GetParam(), 128);  // the fast tier holds about a fifth
  const auto slow = [&](const std::string& name) {
    return std::make_unique<MappedStorage>(fast.dim + fast.optimizer_state_width, 1 << 12, (dir / name).string(), 16);
  };
  std::filesystem::create_directories(dir / "a");
  std::filesystem::create_directories(dir / "b");
  std::filesystem::create_directories(dir / "c");
  CachingTable table(fast, slow("a"));
  fill(table, 5);
  ASSERT_GT(table.slow().size(), 0);
  ASSERT_GT(table.fast().size(), 0);
  const Snapshot before = tiered_snapshot(table);
  dump(table, KeyType::kUint64, dir / "caching.kv");

  CachingTable again(fast, slow("b"));
  const LoadStats stats = load(again, KeyType::kUint64, dir / "caching.kv");
  EXPECT_EQ(stats.entries, static_cast<std::int64_t>(before.size()));
  EXPECT_EQ(stats.inserted, stats.entries);
  EXPECT_EQ(stats.evicted + stats.refused, 0);
  EXPECT_TRUE(tiered_snapshot(again) == before) << "caching -> caching";

  HostKvTable<std::uint64_t> host(tier_options(GetParam(), 4096));
  host.load(dir / "caching.kv");
  EXPECT_TRUE(testing::snapshot(host) == before) << "caching -> HostKvTable";
  host.dump(dir / "host.kv");
  CachingTable back(fast, slow("c"));
  load(back, KeyType::kUint64, dir / "host.kv");
  EXPECT_TRUE(tiered_snapshot(back) == before) << "HostKvTable -> caching";

  // Loaded again onto itself: every key replaced, nothing added.
  const LoadStats twice = load(back, KeyType::kUint64, dir / "caching.kv");
  EXPECT_EQ(twice.replaced, twice.entries);
  EXPECT_TRUE(tiered_snapshot(back) == before) << "caching -> itself";
}

TEST_P(TieredFile, AHybridTableDumpLoadsIntoEitherKindOfTableUnchanged) {
  const ScratchDir dir("tiered_hybrid");
  const TableOptions options = tier_options(GetParam(), 2048);
  const HybridOptions quarter{2048 / 4 * 8 * static_cast<std::int64_t>(value_bytes(GetParam())), dir.path().string()};
  HybridTable table(options, quarter);
  fill(table, 9);
  ASSERT_GT(table.fast().size(), 0);
  ASSERT_GT(table.slow().size(), 0);
  const Snapshot before = tiered_snapshot(table);
  dump(table, KeyType::kUint64, dir / "hybrid.kv");

  HybridTable again(options, quarter);
  load(again, KeyType::kUint64, dir / "hybrid.kv");
  EXPECT_TRUE(tiered_snapshot(again) == before) << "hybrid -> hybrid";
  HostKvTable<std::uint64_t> host(tier_options(GetParam(), 4096));
  host.load(dir / "hybrid.kv");
  EXPECT_TRUE(testing::snapshot(host) == before) << "hybrid -> HostKvTable";
}

TEST_P(TieredFile, ALoadThatDoesNotFitIsRefusedNamingTheFieldAndChangesNothing) {
  const ScratchDir dir("tiered_refused");
  HostKvTable<std::uint64_t> host(tier_options(GetParam(), 4096));
  testing::fill_random(host, 40, 3);
  host.dump(dir / "host.kv");
  TableOptions narrower = tier_options(GetParam(), 2048);
  narrower.dim = 4;
  HybridTable table(narrower, {1 << 20, dir.path().string()});
  try {
    load(table, KeyType::kUint64, dir / "host.kv");
    ADD_FAILURE() << "a dump of dim 5 loaded into a table of dim 4";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("dim"), std::string::npos) << e.what();
  }
  EXPECT_EQ(table.size(), 0);
}

INSTANTIATE_TEST_SUITE_P(ValueTypes, TieredFile, ::testing::Values(ValueType::kFloat32, ValueType::kFloat16),
                         [](const ::testing::TestParamInfo<ValueType>& p) {
                           return p.param == ValueType::kFloat32 ? "float32" : "float16";
                         });

}  // namespace
}  // namespace embscale::kv
