// DeviceStaticRowStore against StaticRowStore, on the stand-in device library (its "device" memory
// is host memory; its embedding_rows family runs the kernels' portable code in loops): the same
// initial rows (a column shard's too), the same rows after every optimizer under every update type
// it has, over several steps of random gradients (fixed seed) with rows touched and untouched and a
// step without keys, strided and several-range ownership, a foreign key refused by name, what it
// does not hold refused at construction.
#include "embedding/device_static_row_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/device_resources.hpp"
#include "device_store_test_support.hpp"
#include "embedding/static_row_store.hpp"

namespace embscale::embedding {
namespace {

using testing::bits_of;
using testing::kDevice;
using testing::OnDevice;

kv::TableOptions options(std::int64_t dim, std::int32_t state_width) {
  kv::TableOptions o;
  o.dim = dim;
  o.optimizer_state_width = state_width;
  o.seed = 7;
  o.num_embeddings = 5000;
  return o;
}

OwnedKeys strided_and_a_block() {
  OwnedKeys owned;
  owned.add(1, 900, 3);   // 1, 4, 7, ...
  owned.add(1000, 1400);  // a block
  return owned;
}

TEST(DeviceStaticRowStore, StartsFromTheHostStoresRowsAndReadsThemBack) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  StaticRowStore host(strided_and_a_block(), options(5, 0));
  DeviceStaticRowStore device(strided_and_a_block(), options(5, 0), 0, 0, kDevice, library);
  EXPECT_EQ(device.size(), host.size());
  EXPECT_EQ(device.execution_context().memory, MemorySpace::kDevice);
  EXPECT_EQ(bits_of(device), bits_of(host));
  const std::vector<Key> keys = {1399, 4, 1000, 898, 7};
  std::vector<float> want(keys.size() * 5);
  host.read(keys, want);
  OnDevice<Key> d_keys(library, keys);
  OnDevice<float> d_rows(library, std::vector<float>(keys.size() * 5, -1.0f));
  device.read(d_keys.span(), d_rows.span());
  EXPECT_EQ(d_rows.host(), want);
  EXPECT_EQ(device.take_counters().hits, 5);
  std::vector<float> one(5);
  ASSERT_TRUE(device.row(898, one));
  EXPECT_EQ(one, std::vector<float>(want.begin() + 15, want.begin() + 20));
  EXPECT_FALSE(device.row(2, one));  // 2 is not 1 mod 3
}

TEST(DeviceStaticRowStore, AForeignKeyIsRefusedByName) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  DeviceStaticRowStore device(strided_and_a_block(), options(3, 0), 0, 0, kDevice, library);
  OnDevice<Key> keys(library, {4, 5, 1001});
  OnDevice<float> rows(library, std::vector<float>(9));
  try {
    device.read(keys.span(), rows.span());
    ADD_FAILURE() << "key 5 is not owned";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "static table: received key 5, which this rank does not own");
  }
}

class DeviceStaticRowTypes : public ::testing::TestWithParam<kv::ValueType> {};

// Every storage type: fp32 rows updated in place, fp16 and bf16 rows decoded, updated and rounded
// back as the host store does.
TEST_P(DeviceStaticRowTypes, EveryOptimizerAndUpdateTypeLeavesTheHostStoresBits) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  std::mt19937_64 random(20261128);
  std::normal_distribution<float> value(0.0f, 0.5f);
  using config::OptimizerType;
  std::vector<std::pair<OptimizerType, UpdateType>> cases;
  for (const auto type : {OptimizerType::kSGD, OptimizerType::kMomentumSGD, OptimizerType::kNesterov,
                          OptimizerType::kAdam, OptimizerType::kAdaGrad, OptimizerType::kRowWiseAdaGrad})
    for (const auto update : {UpdateType::kLocal, UpdateType::kGlobal}) cases.emplace_back(type, update);
  cases.emplace_back(OptimizerType::kAdam, UpdateType::kLazyGlobal);
  for (const auto& [type, update] : cases) {
    config::Optimizer o;
    o.type = type;
    o.update_type = update;
    o.learning_rate = 0.05;
    o.momentum_factor = 0.9;
    o.initial_accu_value = 0.1;
    constexpr std::int32_t dim = 6;
    const auto optimizer = make_sparse_optimizer(o, dim);
    auto table = options(dim, optimizer->state_width());
    table.value_type = GetParam();
    table.initializer.initial_state.assign(static_cast<std::size_t>(optimizer->state_width()), 0.0f);
    optimizer->init_state(table.initializer.initial_state);
    StaticRowStore host(strided_and_a_block(), table);
    DeviceStaticRowStore device(strided_and_a_block(), table, 0, 0, kDevice, library);
    const std::string what = config::to_string(type) + " " + config::to_string(update);
    for (std::int64_t step = 1; step <= 6; ++step) {
      std::vector<Key> keys;  // distinct, in no order; none at step 4 (a Global step still sweeps)
      for (Key k = 1000 + step; k < 1400 && step != 4; k += 37) keys.push_back(k);
      for (Key k = 4 + 3 * step; k < 900 && step != 4; k += 3 * 11) keys.push_back(k);
      std::shuffle(keys.begin(), keys.end(), random);
      std::vector<float> grads(keys.size() * dim);
      for (auto& g : grads) g = value(random);
      host.apply(keys, grads, *optimizer, step);
      OnDevice<Key> d_keys(library, keys);
      OnDevice<float> d_grads(library, grads);
      device.apply(d_keys.span(), d_grads.span(), *optimizer, step);
      ASSERT_EQ(bits_of(device), bits_of(host)) << what << " at step " << step;
      std::vector<float> want(keys.size() * dim);
      host.read(keys, want);
      OnDevice<float> d_rows(library, std::vector<float>(keys.size() * dim));
      device.read(d_keys.span(), d_rows.span());
      ASSERT_EQ(d_rows.host(), want) << what << " at step " << step << ": the rows read";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(StorageTypes, DeviceStaticRowTypes,
                         ::testing::Values(kv::ValueType::kFloat32, kv::ValueType::kFloat16, kv::ValueType::kBFloat16),
                         [](const ::testing::TestParamInfo<kv::ValueType>& type) {
                           return type.param == kv::ValueType::kFloat32   ? std::string("fp32")
                                  : type.param == kv::ValueType::kFloat16 ? std::string("fp16")
                                                                          : std::string("bf16");
                         });

// A column shard (column-wise sharding) holds columns [2, 5) of rows 8 wide, as the host's does.
TEST(DeviceStaticRowStore, AColumnShardStartsFromThoseColumnsOfTheFullRows) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  StaticRowStore host(strided_and_a_block(), options(3, 0), 2, 8);
  DeviceStaticRowStore device(strided_and_a_block(), options(3, 0), 2, 8, kDevice, library);
  EXPECT_EQ(bits_of(device), bits_of(host));
}

// Its spans are device memory: a host vector handed to read is refused (on a GPU it would fault).
TEST(DeviceStaticRowStore, HostSpansAreRefused) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  DeviceStaticRowStore device(strided_and_a_block(), options(3, 0), 0, 0, kDevice, library);
  const std::vector<Key> keys = {4, 7};
  std::vector<float> rows(6);
  try {
    device.read(keys, rows);
    ADD_FAILURE() << "host spans accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("a buffer in host memory"), std::string::npos) << e.what();
  }
}

TEST(DeviceStaticRowStore, RefusesWhatItDoesNotHold) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  EXPECT_THROW(DeviceStaticRowStore(strided_and_a_block(), options(4, 0), 0, 0, ExecutionContext::host(), library),
               Error);
}

}  // namespace
}  // namespace embscale::embedding
