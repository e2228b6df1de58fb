// The typed conformance suite (kv_conformance.hpp) on HostKvTable, int64 and uint64 keys: every
// call of the interface, every score strategy and value type, and every admission filter, on 1
// and 3 threads, with small buckets so that growth, eviction, refusal and admission all happen.
#include <gtest/gtest.h>

#include <limits>
#include <memory>
#include <random>
#include <tuple>

#include "core/error.hpp"
#include "kv/host_kv_table.hpp"
#include "kv_conformance.hpp"

namespace embscale::kv {
namespace {

using testing::small_options;

// The suite on a HostKvTable: with threads > 1 every call takes the partitioned parallel path
// (min_keys_for_threads = 1).
void run_against_reference(KeyType key_type, const TableOptions& options, ScoreStrategy strategy, std::uint64_t seed,
                           int threads) {
  testing::run_against_reference<HostKvTable>(key_type, options, strategy, seed, ExecutionContext{threads, 1});
}

// (key type, strategy, value type, threads): with threads > 1 every call takes the partitioned
// parallel path (min_keys_for_threads = 1), which must give the one-key-at-a-time result exactly.
class Conformance : public ::testing::TestWithParam<std::tuple<KeyType, ScoreStrategy, ValueType, int>> {};

TEST_P(Conformance, RandomCallsMatchTheReference) {
  const auto [key_type, strategy, type, threads] = GetParam();
  const std::uint64_t seed = 20261122 + static_cast<std::uint64_t>(strategy) * 10 + static_cast<std::uint64_t>(type);
  run_against_reference(key_type, small_options(strategy, type), strategy, seed, threads);
}

INSTANTIATE_TEST_SUITE_P(
    KeysStrategiesAndTypes, Conformance,
    ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                       ::testing::Values(ScoreStrategy::kTimestamp, ScoreStrategy::kStep, ScoreStrategy::kCustomized,
                                         ScoreStrategy::kLfu, ScoreStrategy::kEpochLru, ScoreStrategy::kEpochLfu),
                       ::testing::Values(ValueType::kFloat32, ValueType::kFloat16, ValueType::kBFloat16),
                       ::testing::Values(1, 3)),
    [](const auto& test) {
      return std::string(std::get<0>(test.param) == KeyType::kInt64 ? "int64_" : "uint64_") +
             to_string(std::get<1>(test.param)) + "_" + to_string(std::get<2>(test.param)) + "_threads" +
             std::to_string(std::get<3>(test.param));
    });

// (key type, strategy, admission filter, threads): the filters over every score strategy, against
// the reference's independent model of them (admission_reference.hpp), float32 rows. FREQUENCY
// runs only here: it needs a filter (its new keys score the filter's estimate).
class AdmissionConformance
    : public ::testing::TestWithParam<std::tuple<KeyType, ScoreStrategy, AdmissionOptions::Kind, int>> {};

TEST_P(AdmissionConformance, RandomCallsMatchTheReference) {
  const auto [key_type, strategy, kind, threads] = GetParam();
  TableOptions options = small_options(strategy, ValueType::kFloat32);
  options.admission = testing::small_admission(kind);
  const std::uint64_t seed = 20261123 + static_cast<std::uint64_t>(strategy) * 10 + static_cast<std::uint64_t>(kind);
  run_against_reference(key_type, options, strategy, seed, threads);
}

INSTANTIATE_TEST_SUITE_P(
    KeysStrategiesAndFilters, AdmissionConformance,
    ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                       ::testing::Values(ScoreStrategy::kTimestamp, ScoreStrategy::kStep, ScoreStrategy::kCustomized,
                                         ScoreStrategy::kLfu, ScoreStrategy::kEpochLru, ScoreStrategy::kEpochLfu,
                                         ScoreStrategy::kFrequency),
                       ::testing::Values(AdmissionOptions::Kind::kKCount, AdmissionOptions::Kind::kTinyLfu),
                       ::testing::Values(1, 3)),
    [](const auto& test) {
      return std::string(std::get<0>(test.param) == KeyType::kInt64 ? "int64_" : "uint64_") +
             to_string(std::get<1>(test.param)) + "_" + to_string(std::get<2>(test.param)) + "_threads" +
             std::to_string(std::get<3>(test.param));
    });

TEST(HostKvTable, ReservedKeysAreRejectedForBothKeyTypes) {
  TableOptions options = small_options(ScoreStrategy::kStep, ValueType::kFloat32);
  HostKvTable<std::int64_t> signed_table(options);
  HostKvTable<std::uint64_t> unsigned_table(options);
  std::vector<float> row(static_cast<std::size_t>(signed_table.row_width()), 1.0f);
  for (const std::int64_t k : {-1L, -2L, -3L}) {
    const std::vector<std::int64_t> key{k};
    EXPECT_THROW(signed_table.insert_or_assign(key, row), InputError) << k;
    const std::vector<std::uint64_t> ukey{static_cast<std::uint64_t>(k)};
    EXPECT_THROW(unsigned_table.insert_or_assign(ukey, row), InputError) << k;
  }
  const std::vector<std::int64_t> allowed{-4, std::numeric_limits<std::int64_t>::min()};
  std::vector<float> rows(2 * row.size(), 1.0f);
  EXPECT_EQ(signed_table.insert_or_assign(allowed, rows).inserted, 2);
  EXPECT_EQ(signed_table.size(), 2);
}

// The host table's rows are in host memory: a device context is refused and the table keeps the
// context it had; host contexts of any thread count are taken as they are.
TEST(HostKvTable, RefusesADeviceExecutionContextAndKeepsItsOwn) {
  HostKvTable<std::int64_t> table(small_options(ScoreStrategy::kLfu, ValueType::kFloat32));
  table.set_execution_context(ExecutionContext::host(2, 64));
  try {
    table.set_execution_context(ExecutionContext::for_device(1, nullptr));
    FAIL() << "a device context was taken";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the host KV table keeps its rows in host memory: it cannot run in a device "
                                         "context (device 1)"),
              std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(table.execution_context().on_host());
  EXPECT_EQ(table.execution_context().threads, 2);
  EXPECT_EQ(table.execution_context().min_keys_for_threads, 64);
}

}  // namespace
}  // namespace embscale::kv
