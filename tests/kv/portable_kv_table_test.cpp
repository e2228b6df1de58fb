// The typed conformance suite (kv_conformance.hpp) on PortableKvTable, the GPU table's logic run
// on the host (kv/portable_table.hpp): every call of the interface, every score strategy, both
// admission filters, int64 and uint64 keys, with buckets of 16 slots (a 16-lane tile) and of 32
// (a warp's 32 lanes, the device's tile), so that growth, eviction, refusal, admission and
// duplicate keys in a batch all happen. It holds the GPU table's batch semantics (bucket groups
// in input order) to the CPU table's "one key at a time in input order", exactly.
#include <gtest/gtest.h>

#include <map>
#include <tuple>

#include "core/error.hpp"
#include "kv/host_kv_table.hpp"
#include "kv_conformance.hpp"
#include "table_file_testing.hpp"

namespace embscale::kv {
namespace {

using testing::ScratchDir;
using testing::small_options;

TableOptions portable_options(ScoreStrategy strategy, std::int64_t bucket_capacity) {
  TableOptions o = small_options(strategy, ValueType::kFloat32);
  o.bucket_capacity = bucket_capacity;
  o.init_capacity = 2 * bucket_capacity;  // 2 buckets: growth happens
  o.max_capacity = 128;                   // eviction and refusal happen
  return o;
}

std::string key_name(KeyType k) { return k == KeyType::kInt64 ? "int64_" : "uint64_"; }

// (key type, strategy, bucket capacity)
class PortableConformance : public ::testing::TestWithParam<std::tuple<KeyType, ScoreStrategy, int>> {};

TEST_P(PortableConformance, RandomCallsMatchTheReference) {
  const auto [key_type, strategy, bucket_capacity] = GetParam();
  const std::uint64_t seed = 20261128 + static_cast<std::uint64_t>(strategy) * 10 + bucket_capacity;
  testing::run_against_reference<PortableKvTable>(key_type, portable_options(strategy, bucket_capacity), strategy, seed,
                                                  ExecutionContext{});
}

INSTANTIATE_TEST_SUITE_P(KeysStrategiesAndTiles, PortableConformance,
                         ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                                            ::testing::Values(ScoreStrategy::kTimestamp, ScoreStrategy::kStep,
                                                              ScoreStrategy::kCustomized, ScoreStrategy::kLfu,
                                                              ScoreStrategy::kEpochLru, ScoreStrategy::kEpochLfu),
                                            ::testing::Values(16, 32)),
                         [](const auto& test) {
                           return key_name(std::get<0>(test.param)) + to_string(std::get<1>(test.param)) + "_bucket" +
                                  std::to_string(std::get<2>(test.param));
                         });

// (key type, strategy, admission filter): the filters through the portable sketch
// (kv/portable/sketch_ref.hpp) against the reference's independent model of them.
class PortableAdmissionConformance
    : public ::testing::TestWithParam<std::tuple<KeyType, ScoreStrategy, AdmissionOptions::Kind>> {};

TEST_P(PortableAdmissionConformance, RandomCallsMatchTheReference) {
  const auto [key_type, strategy, kind] = GetParam();
  TableOptions options = portable_options(strategy, 16);
  options.admission = testing::small_admission(kind);
  const std::uint64_t seed = 20261129 + static_cast<std::uint64_t>(strategy) * 10 + static_cast<std::uint64_t>(kind);
  testing::run_against_reference<PortableKvTable>(key_type, options, strategy, seed, ExecutionContext{});
}

INSTANTIATE_TEST_SUITE_P(
    KeysStrategiesAndFilters, PortableAdmissionConformance,
    ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                       ::testing::Values(ScoreStrategy::kTimestamp, ScoreStrategy::kStep, ScoreStrategy::kCustomized,
                                         ScoreStrategy::kLfu, ScoreStrategy::kEpochLru, ScoreStrategy::kEpochLfu,
                                         ScoreStrategy::kFrequency),
                       ::testing::Values(AdmissionOptions::Kind::kKCount, AdmissionOptions::Kind::kTinyLfu)),
    [](const auto& test) {
      return key_name(std::get<0>(test.param)) + to_string(std::get<1>(test.param)) + "_" +
             to_string(std::get<2>(test.param));
    });

// Hybrid mode (TableOptions::max_hbm_for_rows): the rows of the buckets past the budget live in
// the far array (pinned host memory on a GPU); the table's behaviour is the same, growth included
// (the split moves as buckets are added).
class PortableHybridConformance : public ::testing::TestWithParam<std::tuple<KeyType, ScoreStrategy>> {};

TEST_P(PortableHybridConformance, RandomCallsMatchTheReference) {
  const auto [key_type, strategy] = GetParam();
  TableOptions options = portable_options(strategy, 16);
  options.max_hbm_for_rows = 3 * 16 * (options.dim + options.optimizer_state_width) * 4;  // 3 buckets' rows near
  testing::run_against_reference<PortableKvTable>(key_type, options, strategy,
                                                  20261140 + static_cast<std::uint64_t>(strategy), ExecutionContext{});
}

INSTANTIATE_TEST_SUITE_P(
    KeysAndStrategies, PortableHybridConformance,
    ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                       ::testing::Values(ScoreStrategy::kStep, ScoreStrategy::kLfu, ScoreStrategy::kCustomized)),
    [](const auto& test) { return key_name(std::get<0>(test.param)) + to_string(std::get<1>(test.param)); });

// One file format: a table dumped by the GPU table's logic loads into the CPU table with every
// entry, score and row, and back (a dump taken on a GPU loads on a CPU).
TEST(PortableKvTable, DumpsLoadIntoTheCpuTableAndBack) {
  TableOptions options = portable_options(ScoreStrategy::kLfu, 32);
  options.max_capacity = 1024;
  PortableKvTable<std::int64_t> portable(options);
  HostKvTable<std::int64_t> host(options);
  std::vector<std::int64_t> keys;
  for (std::int64_t k = -150; k < 150; ++k) keys.push_back(k * 7919);
  std::vector<float> rows(keys.size() * static_cast<std::size_t>(portable.row_width()));
  portable.find_or_insert(keys, rows);
  portable.find_or_insert(std::span(keys).first(100), std::span(rows).first(100 * 5));  // LFU counts 2
  ScratchDir dir("portable_dump");
  portable.dump(dir / "from-portable");
  const LoadStats loaded = host.load(dir / "from-portable");
  EXPECT_EQ(loaded.entries, 300);
  EXPECT_EQ(loaded.inserted, 300);
  Entries<std::int64_t> want, got;
  portable.export_batch_if(0, want);
  host.dump(dir / "from-host");
  PortableKvTable<std::int64_t> back(options);
  EXPECT_EQ(back.load(dir / "from-host").inserted, 300);
  back.export_batch_if(0, got);
  const auto by_key = [](const Entries<std::int64_t>& e) {
    std::map<std::int64_t, std::pair<std::uint64_t, std::vector<float>>> m;
    const std::size_t w = e.values.size() / std::max<std::size_t>(1, e.size());
    for (std::size_t i = 0; i < e.size(); ++i)
      m[e.keys[i]] = {e.scores[i],
                      {e.values.begin() + static_cast<long>(i * w), e.values.begin() + static_cast<long>((i + 1) * w)}};
    return m;
  };
  EXPECT_EQ(by_key(got), by_key(want));
  EXPECT_EQ(by_key(want).at(keys[0]).first, 2u);
}

// The GPU table stores float32 rows in memory: other value types and a rows directory are
// refused by name, as is a device context for this host-memory table.
TEST(PortableKvTable, RefusesWhatTheGpuTableDoesNotStore) {
  TableOptions options = portable_options(ScoreStrategy::kStep, 16);
  options.value_type = ValueType::kFloat16;
  EXPECT_THROW(PortableKvTable<std::int64_t>{options}, InputError);
  options.value_type = ValueType::kFloat32;
  options.rows_directory = "/tmp";
  EXPECT_THROW(PortableKvTable<std::int64_t>{options}, InputError);
  options.rows_directory.clear();
  PortableKvTable<std::int64_t> table(options);
  EXPECT_THROW(table.set_execution_context(ExecutionContext::for_device(0, nullptr)), Error);
  const std::vector<std::int64_t> reserved{-2};
  std::vector<float> row(static_cast<std::size_t>(table.row_width()));
  EXPECT_THROW(table.insert_or_assign(reserved, row), InputError);
}

}  // namespace
}  // namespace embscale::kv
