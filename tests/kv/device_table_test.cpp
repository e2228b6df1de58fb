// DeviceTable (kv/device_table.hpp), the GPU table, from the host side. Through lib/device's
// stand-in library (tests/device/fake_kv_table.cpp: the kv_table family on host memory, from the
// same portable code the kernels run) the table's host side runs in CI as on a GPU: the copies in
// and out, the scratch carving, the grouping and run calls, the rehash, the admission banks'
// growth and the exports, held to the reference model by the typed conformance suite. A library
// without the family, and the real library without a GPU, are refused with the reason before any
// table memory is asked for; the real library on a GPU runs the suite too (a developer's machine
// with CUDA and GoogleTest; the lent GPU machine runs tests/gpu/kv_table_gpu_test.cu instead).
#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <string>
#include <tuple>

#include "../device/scoped_env.hpp"
#include "core/error.hpp"
#include "device/device_library.hpp"
#include "device/device_resources.hpp"
#include "device/library_search.hpp"
#include "kv/device_table.hpp"
#include "kv/keyed_kv_table.hpp"
#include "kv_conformance.hpp"
#include "table_file_testing.hpp"

namespace embscale::kv {
namespace {

using embscale::testing::ScopedEnv;

TableOptions device_options(ScoreStrategy strategy, std::int64_t bucket_capacity = 32) {
  TableOptions o = testing::small_options(strategy, ValueType::kFloat32);
  o.bucket_capacity = bucket_capacity;
  o.init_capacity = 2 * bucket_capacity;
  return o;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// (key type, strategy, bucket capacity) on the stand-in library, found as a run finds the real
// one (EMBSCALE_CUDA_LIBRARY).
class DeviceConformance : public ::testing::TestWithParam<std::tuple<KeyType, ScoreStrategy, int>> {};

TEST_P(DeviceConformance, RandomCallsMatchTheReferenceThroughTheSeam) {
  const auto [key_type, strategy, bucket_capacity] = GetParam();
  const ScopedEnv library(device::kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  TableOptions options = device_options(strategy, bucket_capacity);
  if (strategy == ScoreStrategy::kFrequency)  // its new keys score the filter's estimate
    options.admission = testing::small_admission(AdmissionOptions::Kind::kTinyLfu);
  else if (strategy == ScoreStrategy::kLfu)
    options.admission = testing::small_admission(AdmissionOptions::Kind::kKCount);
  testing::run_against_reference<DeviceKvTable>(key_type, options, strategy,
                                                20261130 + static_cast<std::uint64_t>(strategy), ExecutionContext{});
}

INSTANTIATE_TEST_SUITE_P(KeysStrategiesAndTiles, DeviceConformance,
                         ::testing::Combine(::testing::Values(KeyType::kInt64, KeyType::kUint64),
                                            ::testing::ValuesIn(kScoreStrategies), ::testing::Values(16, 32)),
                         [](const auto& test) {
                           return std::string(std::get<0>(test.param) == KeyType::kInt64 ? "int64_" : "uint64_") +
                                  to_string(std::get<1>(test.param)) + "_bucket" +
                                  std::to_string(std::get<2>(test.param));
                         });

// Hybrid mode through the seam: the far rows in the stand-in's "pinned" memory, exports reading
// across the split.
TEST(DeviceTable, HybridModeMatchesTheReference) {
  const ScopedEnv library(device::kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  for (const ScoreStrategy strategy : {ScoreStrategy::kStep, ScoreStrategy::kLfu}) {
    SCOPED_TRACE(to_string(strategy));
    TableOptions options = device_options(strategy, 16);
    options.max_hbm_for_rows = 2 * 16 * (options.dim + options.optimizer_state_width) * 4;  // 2 buckets near
    testing::run_against_reference<DeviceKvTable>(KeyType::kInt64, options, strategy,
                                                  20261150 + static_cast<std::uint64_t>(strategy), ExecutionContext{});
  }
}

// A dump of the GPU table loads into the CPU table, entry for entry.
TEST(DeviceTable, ItsDumpLoadsIntoTheCpuTable) {
  const ScopedEnv library(device::kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  TableOptions options = device_options(ScoreStrategy::kStep);
  options.max_capacity = 1024;
  DeviceKvTable<std::int64_t> gpu(options);
  std::vector<std::int64_t> keys;
  for (std::int64_t k = -200; k < 200; ++k) keys.push_back(k * 104729);
  std::vector<float> rows(keys.size() * static_cast<std::size_t>(gpu.row_width()));
  EXPECT_EQ(gpu.find_or_insert(keys, rows).inserted, 400);
  testing::ScratchDir dir("device_table_dump");
  gpu.dump(dir / "gpu");
  HostKvTable<std::int64_t> cpu(options);
  EXPECT_EQ(cpu.load(dir / "gpu").inserted, 400);
  std::vector<float> again(rows.size());
  std::vector<std::uint8_t> founds(keys.size());
  cpu.find(keys, again, founds);
  EXPECT_EQ(again, rows);
  EXPECT_EQ(std::count(founds.begin(), founds.end(), 1), 400);
}

// Batches already in device memory (the GPU step's) on the caller's stream: the same rows and
// outcomes as the same calls from host memory, strict (no host buffer reaches the kernels), and a
// reserved key refused; the host executor takes none.
TEST(DeviceTable, ResidentCallsMatchHostMemoryCalls) {
  const ScopedEnv strict("EMBSCALE_FAKE_STRICT_DEVICE_MEMORY", "1");
  const auto library = device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  const device::Stream stream(library);
  TableOptions options = device_options(ScoreStrategy::kStep, 16);
  options.max_capacity = 64;  // the batches below evict
  DeviceTable resident(options, library, stream.handle());
  DeviceTable copied(options, library);
  const std::size_t w = static_cast<std::size_t>(resident.row_width());
  std::vector<std::uint64_t> keys;
  for (std::uint64_t k = 0; k < 150; ++k) keys.push_back(k * 7919 % 1000);
  device::DeviceBuffer d_keys(library, static_cast<std::int64_t>(keys.size() * 8));
  device::DeviceBuffer d_rows(library, static_cast<std::int64_t>(keys.size() * w * sizeof(float)));
  d_keys.copy_from_host(keys.data(), d_keys.bytes(), stream.handle());
  const std::span<const std::uint64_t> on_device(static_cast<const std::uint64_t*>(d_keys.data()), keys.size());
  auto* rows = static_cast<float*>(d_rows.data());
  std::vector<float> want(keys.size() * w), got(keys.size() * w);
  std::vector<std::uint8_t> founds(keys.size());

  const CallStats inserted = resident.find_or_insert_resident(on_device, rows);
  const CallStats inserted_copied = copied.find_or_insert(keys, want);
  EXPECT_EQ(inserted.inserted, inserted_copied.inserted);
  EXPECT_EQ(inserted.evicted, inserted_copied.evicted);
  EXPECT_GT(inserted.evicted, 0);
  d_rows.copy_to_host(got.data(), d_rows.bytes(), stream.handle());
  stream.synchronize();
  EXPECT_EQ(got, want);

  for (float& v : want) v += 1.0f;  // assign changes the rows still held, then find reads them
  d_rows.copy_from_host(want.data(), d_rows.bytes(), stream.handle());
  EXPECT_EQ(resident.assign_resident(on_device, rows).found, copied.assign(keys, want).found);
  const CallStats found = resident.find_resident(on_device, rows);
  EXPECT_EQ(found.found, copied.find(keys, want, founds).found);
  d_rows.copy_to_host(got.data(), d_rows.bytes(), stream.handle());
  stream.synchronize();
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!founds[i]) continue;
    EXPECT_TRUE(std::equal(got.begin() + i * w, got.begin() + (i + 1) * w, want.begin() + i * w)) << "key " << i;
  }

  // Exported on the device, a block of slots at a time: the entries an export to the host gives.
  std::vector<std::uint64_t> all_keys, scores, exported;
  std::vector<float> all_rows, exported_rows;
  resident.export_batch(0, resident.capacity(), all_keys, all_rows, scores);
  const std::int64_t block = 24;  // cuts buckets
  device::DeviceBuffer x_keys(library, block * 8), x_rows(library, block * static_cast<std::int64_t>(w * 4));
  for (std::int64_t offset = 0; offset < resident.capacity(); offset += block) {
    const auto n = static_cast<std::size_t>(resident.export_resident(
        offset, block, static_cast<std::uint64_t*>(x_keys.data()), static_cast<float*>(x_rows.data())));
    std::vector<std::uint64_t> k(n);
    std::vector<float> r(n * w);
    x_keys.copy_to_host(k.data(), static_cast<std::int64_t>(n * 8), stream.handle());
    x_rows.copy_to_host(r.data(), static_cast<std::int64_t>(n * w * 4), stream.handle());
    stream.synchronize();
    exported.insert(exported.end(), k.begin(), k.end());
    exported_rows.insert(exported_rows.end(), r.begin(), r.end());
  }
  EXPECT_EQ(exported, all_keys);
  EXPECT_EQ(exported_rows, all_rows);

  const std::uint64_t reserved = kFirstReservedKey + 1;
  d_keys.copy_from_host(&reserved, 8, stream.handle());
  EXPECT_NE(error_of([&] { resident.find_resident(on_device.first(1), rows); }).find("position 0"), std::string::npos);
  PortableTable host(options);
  EXPECT_THROW(host.find_resident(keys, want.data()), Error);
}

// A library without the kv_table family cannot hold a GPU table, and says which family it lacks.
TEST(DeviceTable, ALibraryWithoutTheGpuTableIsRefusedByName) {
  const device::DeviceLibrary lacking = device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE_LACKING_KV_TABLE);
  const std::string what = error_of([&] { DeviceTable table(device_options(ScoreStrategy::kStep), lacking); });
  EXPECT_NE(what.find("kernel family kv_table: the library does not have it"), std::string::npos) << what;
}

#ifdef EMBSCALE_TEST_CUDA_LIBRARY
// The real library: without a GPU the table is refused with that reason; with one, the suite.
TEST(DeviceTable, OnTheRealLibraryWithoutAGpuTheTableIsRefusedElseItPassesTheSuite) {
  const device::DeviceLibrary library = device::DeviceLibrary::open(EMBSCALE_TEST_CUDA_LIBRARY);
  if (library.device_count() == 0) {
    const std::string what = error_of([&] { DeviceTable table(device_options(ScoreStrategy::kStep), library); });
    EXPECT_NE(what.find("the GPU KV table needs a GPU"), std::string::npos) << what;
    GTEST_SKIP() << "no GPU: the conformance suite on the GPU itself did not run";
  }
  const ScopedEnv variable(device::kLibraryVariable, EMBSCALE_TEST_CUDA_LIBRARY);
  for (const ScoreStrategy strategy : kScoreStrategies) {
    SCOPED_TRACE(to_string(strategy));
    TableOptions options = device_options(strategy);
    if (strategy == ScoreStrategy::kFrequency)
      options.admission = testing::small_admission(AdmissionOptions::Kind::kTinyLfu);
    testing::run_against_reference<DeviceKvTable>(KeyType::kInt64, options, strategy,
                                                  20261130 + static_cast<std::uint64_t>(strategy), ExecutionContext{});
  }
}
#endif

}  // namespace
}  // namespace embscale::kv
