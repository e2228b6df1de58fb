// DeviceKvRowStore against KvRowStore (the host's dynamic table), on the stand-in device library
// (its kv_table and embedding_rows families run the kernels' portable code on host memory, strict:
// a host buffer where a GPU reads device memory fails the call): over random Zipf-like batches of
// distinct keys (fixed seed), with room for every key and with a capacity far below them (a
// batch's inserts evict, keys of the same batch among them), the same rows read, the same rows
// held after every optimizer and update type (the Global sweep of untouched rows included, and a
// step without keys, which sweeps too), the same counters; evaluation reads without inserting; a
// reserved key and a capacity too small under safe_check ERROR are refused by name, and what the
// GPU's table cannot serve (a host context, the eviction study) is refused.
#include "embedding/device_kv_row_store.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device_store_test_support.hpp"
#include "embedding/kv_row_store.hpp"
#include "kv/table_file.hpp"
#include "kv/table_file_format.hpp"

namespace embscale::embedding {
namespace {

using testing::bits_of;
using testing::kDevice;
using testing::OnDevice;

kv::TableOptions table(std::int64_t dim, const SparseOptimizer* optimizer, std::int64_t capacity) {
  kv::TableOptions o;
  o.dim = dim;
  o.seed = 11;
  o.num_embeddings = 100000;
  o.max_capacity = capacity;
  o.bucket_capacity = 16;
  o.score_strategy = kv::ScoreStrategy::kStep;
  o.training = optimizer != nullptr;
  if (optimizer) {
    o.optimizer_state_width = optimizer->state_width();
    o.initializer.initial_state.assign(static_cast<std::size_t>(optimizer->state_width()), 0.0f);
    optimizer->init_state(o.initializer.initial_state);
  }
  return o;
}

// `n` distinct keys, most of them from a small hot set (as a de-duplicated Zipf batch).
std::vector<Key> distinct_keys(std::mt19937_64& random, std::size_t n) {
  std::set<Key> keys;
  std::uniform_int_distribution<Key> hot(0, 63), cold(64, 5000);
  std::bernoulli_distribution is_hot(0.5);
  while (keys.size() < n) keys.insert(is_hot(random) ? hot(random) : cold(random));
  std::vector<Key> out(keys.begin(), keys.end());
  std::shuffle(out.begin(), out.end(), random);
  return out;
}

void expect_same_counters(const StoreCounters& device, const StoreCounters& host, const std::string& where) {
  EXPECT_EQ(device.hits, host.hits) << where;
  EXPECT_EQ(device.misses, host.misses) << where;
  EXPECT_EQ(device.inserts, host.inserts) << where;
  EXPECT_EQ(device.evictions, host.evictions) << where;
  EXPECT_EQ(device.refused, host.refused) << where;
  EXPECT_EQ(device.not_admitted, host.not_admitted) << where;
}

// Every entry of a store's table (key, score, full row as bits), by key: from its dump, so that
// the scores, which no read returns, are compared too.
std::map<std::uint64_t, std::pair<std::uint64_t, std::vector<std::uint32_t>>> entries_of(const RowStore& store,
                                                                                         const std::string& name) {
  const auto path = std::filesystem::temp_directory_path() / ("device_kv_row_store_test_" + name + ".table");
  store.dump_table(path);
  const kv::TableOptions& options = *store.table_options();
  const auto width = static_cast<std::int64_t>(store.dim() + store.state_width());
  const kv::TableFileContents contents = kv::read_dump(path, options, width, kv::KeyType::kInt64);
  std::filesystem::remove(path);
  std::map<std::uint64_t, std::pair<std::uint64_t, std::vector<std::uint32_t>>> out;
  for (std::size_t i = 0; i < contents.keys.size(); ++i) {
    auto& [score, row] = out[contents.keys[i]];
    score = contents.scores[i];
    for (std::int64_t v = 0; v < width; ++v)
      row.push_back(std::bit_cast<std::uint32_t>(contents.values[i * static_cast<std::size_t>(width) + v]));
  }
  return out;
}

struct Case {
  config::OptimizerType type;
  UpdateType update;
  bool admission = false;  // a k-count filter (threshold 2) in front of the inserts
};

// Steps of read then apply on both stores; every read's rows, every step's counters and the held
// rows after the last step must be the host's bits.
void check_steps_match(const Case& c, std::int64_t capacity) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  config::Optimizer o;
  o.type = c.type;
  o.update_type = c.update;
  o.learning_rate = 0.05;
  o.momentum_factor = 0.9;
  o.initial_accu_value = 0.1;
  constexpr std::int64_t dim = 5;
  const auto optimizer = make_sparse_optimizer(o, dim);
  kv::TableOptions options = table(dim, optimizer.get(), capacity);
  if (c.admission) {
    options.admission.kind = kv::AdmissionOptions::Kind::kKCount;
    options.admission.threshold_k = 2;
  }
  KvRowStore host(options, "layers[t].storage");
  DeviceKvRowStore device(options, "layers[t].storage", kDevice, library);
  EXPECT_EQ(device.execution_context().memory, MemorySpace::kDevice);
  std::mt19937_64 random(20261128);
  std::normal_distribution<float> gradient(0.0f, 0.5f);
  const std::string where =
      "optimizer " + std::to_string(static_cast<int>(c.type)) + ", capacity " + std::to_string(capacity);
  for (std::int64_t step = 1; step <= 6; ++step) {
    const std::vector<Key> keys = distinct_keys(random, step == 3 ? 0 : 90);
    std::vector<float> want(keys.size() * dim), grads(keys.size() * dim);
    for (float& g : grads) g = gradient(random);
    host.read(keys, want);
    OnDevice<Key> d_keys(library, keys);
    OnDevice<float> d_rows(library, std::vector<float>(keys.size() * dim, -1.0f));
    OnDevice<float> d_grads(library, grads);
    device.read(d_keys.span(), d_rows.span());
    EXPECT_EQ(d_rows.host(), want) << where << ", step " << step << ": the rows read";
    host.apply(keys, grads, *optimizer, step);
    device.apply(d_keys.span(), d_grads.span(), *optimizer, step);
    expect_same_counters(device.take_counters(), host.take_counters(), where + ", step " + std::to_string(step));
    EXPECT_EQ(device.size(), host.size()) << where;
  }
  EXPECT_EQ(bits_of(device), bits_of(host)) << where << ": the held rows";
  EXPECT_EQ(entries_of(device, "device"), entries_of(host, "host")) << where << ": the entries' scores and state";
  if (capacity < 1000) {
    EXPECT_EQ(device.size(), capacity) << where << ": a full table";
  }
}

TEST(DeviceKvRowStore, EveryOptimizerAndUpdateTypeLeavesTheHostTablesRows) {
  using config::OptimizerType;
  const Case cases[] = {
      {OptimizerType::kSGD, UpdateType::kLocal},          {OptimizerType::kSGD, UpdateType::kGlobal},
      {OptimizerType::kAdaGrad, UpdateType::kGlobal},     {OptimizerType::kRowWiseAdaGrad, UpdateType::kLocal},
      {OptimizerType::kMomentumSGD, UpdateType::kLocal},  {OptimizerType::kMomentumSGD, UpdateType::kGlobal},
      {OptimizerType::kNesterov, UpdateType::kGlobal},    {OptimizerType::kAdam, UpdateType::kLocal},
      {OptimizerType::kAdam, UpdateType::kGlobal},        {OptimizerType::kAdam, UpdateType::kLazyGlobal},
      {OptimizerType::kAdaGrad, UpdateType::kLocal, true}};
  for (const Case& c : cases)
    for (const std::int64_t capacity : {8192, 64}) check_steps_match(c, capacity);
}

TEST(DeviceKvRowStore, EvaluationReadsWithoutInserting) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  KvRowStore host(table(4, nullptr, 4096), "layers[t].storage");
  DeviceKvRowStore device(table(4, nullptr, 4096), "layers[t].storage", kDevice, library);
  std::mt19937_64 random(5);
  const std::vector<Key> keys = distinct_keys(random, 40);
  std::vector<float> want(keys.size() * 4);
  host.read(keys, want);
  OnDevice<Key> d_keys(library, keys);
  OnDevice<float> d_rows(library, std::vector<float>(keys.size() * 4));
  device.read(d_keys.span(), d_rows.span());
  EXPECT_EQ(d_rows.host(), want);
  EXPECT_EQ(device.size(), 0);
  expect_same_counters(device.take_counters(), host.take_counters(), "evaluation");
}

// A reserved key reaches the GPU's table unchecked (the batch was never on the host): the call
// refuses it by value and field, after the other keys were inserted and counted, in training and
// in evaluation.
TEST(DeviceKvRowStore, AReservedKeyIsRefusedByValueAndTheTableStaysConsistent) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  config::Optimizer o;
  o.learning_rate = 0.1;
  const auto sgd = make_sparse_optimizer(o, 3);
  for (const bool training : {true, false}) {
    DeviceKvRowStore device(table(3, training ? sgd.get() : nullptr, 4096), "layers[t].storage", kDevice, library);
    OnDevice<Key> keys(library, {4, 9, -2, 12});
    OnDevice<float> rows(library, std::vector<float>(12));
    try {
      device.read(keys.span(), rows.span());
      ADD_FAILURE() << "key -2 is reserved";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("layers[t].storage: key -2 (position 2 of a batch on the GPU)"),
                std::string::npos)
          << e.what();
    }
    EXPECT_EQ(device.size(), training ? 3 : 0);
    std::int64_t held = 0;
    device.for_each_row([&](Key, std::span<const float>) { ++held; });
    EXPECT_EQ(held, device.size());
  }
}

TEST(DeviceKvRowStore, ACapacityBelowOneBatchIsBadInputUnderSafeCheckError) {
  STRICT_DEVICE_MEMORY;
  const auto library = testing::fake_device();
  config::Optimizer o;
  o.learning_rate = 0.1;
  const auto sgd = make_sparse_optimizer(o, 3);
  kv::TableOptions options = table(3, sgd.get(), 16);
  options.max_load_factor = 1.0;
  options.score_strategy = kv::ScoreStrategy::kLfu;
  options.safe_check = kv::SafeCheck::kError;
  DeviceKvRowStore device(options, "layers[t].storage", kDevice, library);
  std::vector<Key> held(16);
  std::iota(held.begin(), held.end(), Key{0});
  OnDevice<Key> incumbents(library, held);
  OnDevice<float> rows(library, std::vector<float>(48));
  // LFU: newcomers score 1, as the incumbents after one read; a second read raises them to 2.
  device.read(incumbents.span(), rows.span());
  device.read(incumbents.span(), rows.span());
  OnDevice<Key> newcomers(library, {100, 101});
  try {
    device.read(newcomers.span(), rows.span().first(6));
    ADD_FAILURE() << "a full table of higher scores took a newcomer";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[t].storage.max_capacity"), std::string::npos) << e.what();
  }
}

TEST(DeviceKvRowStore, AHostContextAndTheEvictionStudyAreRefused) {
  const auto library = testing::fake_device();
  EXPECT_THROW(DeviceKvRowStore(table(3, nullptr, 4096), "layers[t].storage", ExecutionContext::host(1), library),
               Error);
  DeviceKvRowStore device(table(3, nullptr, 4096), "layers[t].storage", kDevice, library);
  struct Watch : kv::AccessObserver {
    void on_call(std::span<const Key>, const kv::CallOutcome&) override {}
  } watch;
  EXPECT_THROW(device.set_access_observer(&watch), Error);
  EXPECT_NO_THROW(device.set_access_observer(nullptr));
}

}  // namespace
}  // namespace embscale::embedding
