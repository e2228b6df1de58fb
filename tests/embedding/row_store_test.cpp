// The storages behind the RowStore seam: the static array and the KV table start from the same
// rows (one initializer), apply an optimizer the same way, and the KV table's limits show in its
// counters and errors.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <random>
#include <string>

#include "core/error.hpp"
#include "embedding/kv_row_store.hpp"
#include "embedding/static_row_store.hpp"
#include "embedding/tiered_row_store.hpp"
#include "kv/initializer.hpp"

namespace embscale::embedding {
namespace {

// An optimizer whose effect is easy to predict: row -= grad, state counts touches (Local) or
// also counts untouched steps negatively (Global).
class CountingOptimizer final : public SparseOptimizer {
 public:
  explicit CountingOptimizer(UpdateType type) : type_(type) {}
  const char* name() const noexcept override { return "counting"; }
  UpdateType update_type() const noexcept override { return type_; }
  std::int32_t state_width() const noexcept override { return 1; }
  void init_state(std::span<float> state) const noexcept override { state[0] = 0.5f; }
  void update(std::span<float> row, std::span<float> state, std::span<const float> grad,
              std::int64_t) const noexcept override {
    for (std::size_t d = 0; d < row.size(); ++d) row[d] -= grad[d];
    state[0] += 1.0f;
  }
  void update_untouched(std::span<float>, std::span<float> state, std::int64_t) const noexcept override {
    state[0] -= 1.0f;
  }
  bool changes_untouched_rows() const noexcept override { return type_ == UpdateType::kGlobal; }
  portable::OptimizerRef portable_ref(std::int64_t) const override {
    throw Error("the counting optimizer is the host stores' test double: it has no device form");
  }

 private:
  UpdateType type_;
};

kv::TableOptions options(std::int64_t dim) {
  kv::TableOptions o;
  o.dim = dim;
  o.optimizer_state_width = 1;
  o.seed = 99;
  o.num_embeddings = 1000;
  o.max_capacity = 1024;
  o.bucket_capacity = 128;
  o.initializer.initial_state = {0.5f};
  return o;
}

OwnedKeys keys_below(Key end) {
  OwnedKeys owned;
  owned.add(0, end);
  return owned;
}

TEST(RowStores, StaticAndDynamicStartFromTheSameRows) {
  StaticRowStore fixed(keys_below(300), options(7));
  KvRowStore dynamic(options(7), "layers[emb1].storage");
  const std::vector<Key> keys = {0, 5, 299, 17, 123};
  std::vector<float> a(keys.size() * 7), b(keys.size() * 7), want(8);
  fixed.read(keys, a);
  dynamic.read(keys, b);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    kv::initial_row(options(7).initializer, 99, 1000, static_cast<std::uint64_t>(keys[i]), 7, want);
    for (std::size_t d = 0; d < 7; ++d) {
      EXPECT_EQ(a[i * 7 + d], want[d]) << "static, key " << keys[i];
      EXPECT_EQ(b[i * 7 + d], want[d]) << "dynamic, key " << keys[i];
    }
  }
  EXPECT_EQ(dynamic.size(), 5);
  const StoreCounters c = dynamic.take_counters();
  EXPECT_EQ(c.misses, 5);
  EXPECT_EQ(c.inserts, 5);
  EXPECT_EQ(dynamic.take_counters().inserts, 0);  // taken: zeroed
}

TEST(RowStores, AnEvaluatingDynamicStoreReadsWithoutChangingTheTable) {
  kv::TableOptions o = options(3);
  o.eval_initializer.mode = kv::InitializerMode::kConstant;
  o.eval_initializer.value = 0.25;
  KvRowStore store(o, "x");
  const std::vector<Key> held = {4, 9};
  std::vector<float> rows(6);
  store.read(held, rows);  // training: inserted
  const std::vector<float> held_rows = rows;
  (void)store.take_counters();
  store.set_evaluating(true);
  const std::vector<Key> mixed = {9, 500, 4};
  std::vector<float> got(9);
  store.read(mixed, got);
  for (int d = 0; d < 3; ++d) {
    EXPECT_EQ(got[d], held_rows[3 + d]);  // key 9 as held
    EXPECT_EQ(got[3 + d], 0.25f);         // key 500: the eval initializer, not inserted
    EXPECT_EQ(got[6 + d], held_rows[d]);  // key 4
  }
  EXPECT_EQ(store.size(), 2);
  std::vector<float> row(3);
  EXPECT_FALSE(store.row(500, row));
  store.set_evaluating(false);
  store.read(std::vector<Key>{500}, row);  // training again: inserted
  EXPECT_EQ(store.size(), 3);
}

TEST(RowStores, ApplyUpdatesRowsAndStateAlikeInBothStorages) {
  for (const auto type : {UpdateType::kLocal, UpdateType::kGlobal}) {
    const CountingOptimizer optimizer(type);
    StaticRowStore fixed(keys_below(10), options(2));
    KvRowStore dynamic(options(2), "x");
    const std::vector<Key> all = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    std::vector<float> before(20), rows(20);
    fixed.read(all, before);
    dynamic.read(all, rows);
    const std::vector<Key> touched = {3, 7};
    const std::vector<float> grads = {1.0f, 2.0f, -1.0f, 0.5f};
    fixed.apply(touched, grads, optimizer, 1);
    dynamic.apply(touched, grads, optimizer, 1);
    for (RowStore* store : {static_cast<RowStore*>(&fixed), static_cast<RowStore*>(&dynamic)}) {
      std::vector<float> after(20);
      store->read(all, after);
      for (std::size_t i = 0; i < all.size(); ++i) {
        const float g0 = all[i] == 3 ? 1.0f : all[i] == 7 ? -1.0f : 0.0f;
        EXPECT_FLOAT_EQ(after[i * 2], before[i * 2] - g0) << "key " << all[i];
      }
    }
    // The state: touched rows counted up; under Global the others counted down.
    kv::Entries<std::int64_t> entries;
    dynamic.table().export_batch(0, dynamic.table().capacity(), entries);
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const bool hit = entries.keys[i] == 3 || entries.keys[i] == 7;
      const float expected = hit ? 1.5f : type == UpdateType::kGlobal ? -0.5f : 0.5f;
      EXPECT_EQ(entries.values[i * 3 + 2], expected) << "key " << entries.keys[i];
    }
  }
}

TEST(RowStores, AStaticFp32StoreGivesItsRowsAddressesAndThePackedTypesDoNot) {
  StaticRowStore fixed(keys_below(300), options(7));
  const std::vector<Key> keys = {299, 0, 17};
  std::vector<const float*> at(keys.size());
  ASSERT_TRUE(fixed.row_pointers(keys, at));
  std::vector<float> row(7);
  for (std::size_t i = 0; i < keys.size(); ++i) {
    ASSERT_TRUE(fixed.row(keys[i], row));
    for (std::size_t d = 0; d < 7; ++d) EXPECT_EQ(at[i][d], row[d]) << "key " << keys[i];
  }
  EXPECT_EQ(fixed.take_counters().hits, 3);  // counted as reads
  const std::vector<Key> foreign = {300};
  std::vector<const float*> one(1);
  EXPECT_THROW(fixed.row_pointers(foreign, one), Error);

  kv::TableOptions half = options(7);
  half.value_type = kv::ValueType::kFloat16;
  StaticRowStore packed(keys_below(300), half);
  EXPECT_FALSE(packed.row_pointers(keys, at));
  KvRowStore dynamic(options(7), "x");
  EXPECT_FALSE(dynamic.row_pointers(keys, at));
}

TEST(RowStores, RowAddressesMatchTheRowsForOneBlockAndForStridedOwnershipAndRefuseForeignKeys) {
  // One block not starting at 0 (the fast path), two blocks with a gap, and key % 3.
  const auto block = [] {
    OwnedKeys o;
    o.add(1000, 1400);
    return o;
  };
  const auto gap = [] {
    OwnedKeys o;
    o.add(1000, 1200);
    o.add(1300, 1500);
    return o;
  };
  const auto strided = [] {
    OwnedKeys o;
    o.add(1000, 2200, 3);
    return o;
  };
  std::mt19937_64 rng(20261127);
  for (const auto& make : {+block, +gap, +strided}) {
    const OwnedKeys owned = make();
    StaticRowStore store(owned, options(5));
    std::vector<Key> keys;
    for (int i = 0; i < 300; ++i) keys.push_back(owned.key_of(static_cast<std::int64_t>(rng() % owned.rows())));
    std::vector<const float*> at(keys.size());
    ASSERT_TRUE(store.row_pointers(keys, at));
    std::vector<float> row(5);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(store.row(keys[i], row));
      ASSERT_EQ(std::vector<float>(at[i], at[i] + 5), row) << "key " << keys[i];
    }
    // Just outside the owned keys on either side, and in the gap: refused, naming the key.
    for (const Key foreign : {Key{999}, owned.key_of(owned.rows() - 1) + 1, Key{1250}}) {
      if (owned.row_of(foreign) >= 0) continue;  // key % 3 owns some of them
      std::vector<Key> with_foreign = {keys[0], foreign, keys[1]};
      std::vector<const float*> three(3);
      try {
        store.row_pointers(with_foreign, three);
        ADD_FAILURE() << "key " << foreign << " was not refused";
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find(std::to_string(foreign)), std::string::npos) << e.what();
      }
    }
  }
}

TEST(RowStores, AStaticStoreUpdatesTheSameBitsOnAnyNumberOfThreads) {
  const CountingOptimizer optimizer(UpdateType::kGlobal);
  std::vector<Key> keys;
  for (Key k = 0; k < 500; k += 3) keys.push_back(499 - k);  // not in row order
  std::vector<float> grads(keys.size() * 5);
  for (std::size_t i = 0; i < grads.size(); ++i) grads[i] = 0.25f * static_cast<float>(i % 13) - 1.0f;
  for (const auto type : {kv::ValueType::kFloat32, kv::ValueType::kBFloat16}) {
    kv::TableOptions o = options(5);
    o.value_type = type;
    std::vector<std::vector<float>> results;
    for (const int threads : {1, 2, 3}) {
      StaticRowStore store(keys_below(500), o, 0, 0, ExecutionContext::host(threads));
      store.apply(keys, grads, optimizer, 1);
      store.apply(keys, grads, optimizer, 2);
      std::vector<float> all;
      store.for_each_row(
          [&](Key, std::span<const float> values) { all.insert(all.end(), values.begin(), values.end()); });
      results.push_back(all);
    }
    EXPECT_EQ(results[0], results[1]) << kv::to_string(type);
    EXPECT_EQ(results[0], results[2]) << kv::to_string(type);
  }
}

TEST(RowStores, AColumnShardHoldsThoseColumnsOfTheFullRows) {
  kv::TableOptions o = options(2);
  StaticRowStore shard(keys_below(20), o, 3, 8);  // columns 3 and 4 of rows 8 wide
  std::vector<float> full(9), mine(2);
  for (Key k = 0; k < 20; ++k) {
    kv::initial_row(o.initializer, 99, 1000, static_cast<std::uint64_t>(k), 8, full);
    ASSERT_TRUE(shard.row(k, mine));
    EXPECT_EQ(mine[0], full[3]);
    EXPECT_EQ(mine[1], full[4]);
  }
}

TEST(RowStores, HalfPrecisionRowsRoundToTheirType) {
  for (const auto type : {kv::ValueType::kFloat16, kv::ValueType::kBFloat16}) {
    kv::TableOptions o = options(4);
    o.value_type = type;
    StaticRowStore store(keys_below(50), o);
    std::vector<float> row(4), exact(5);
    for (Key k = 0; k < 50; ++k) {
      ASSERT_TRUE(store.row(k, row));
      kv::initial_row(o.initializer, 99, 1000, static_cast<std::uint64_t>(k), 4, exact);
      const double tolerance = type == kv::ValueType::kFloat16 ? 1e-3 : 8e-3;  // relative: 2^-11, 2^-8
      for (std::size_t d = 0; d < 4; ++d) EXPECT_NEAR(row[d], exact[d], std::abs(exact[d]) * tolerance + 1e-7);
    }
  }
}

TEST(RowStores, AStaticStoreRefusesAKeyItDoesNotOwn) {
  StaticRowStore store(keys_below(10), options(2));
  std::vector<float> rows(2);
  const std::vector<Key> foreign = {10};
  EXPECT_THROW(store.read(foreign, rows), Error);
}

TEST(RowStores, DynamicCapacityEvictsAndSafeCheckErrorNamesTheField) {
  kv::TableOptions o = options(2);
  o.max_capacity = 16;
  o.bucket_capacity = 16;
  o.max_load_factor = 1.0;
  o.score_strategy = kv::ScoreStrategy::kLfu;
  KvRowStore store(o, "layers[emb1].storage");
  std::vector<Key> keys;
  for (Key k = 0; k < 40; ++k) keys.push_back(k);
  std::vector<float> rows(keys.size() * 2);
  store.read(keys, rows);
  const StoreCounters c = store.take_counters();
  EXPECT_EQ(store.size(), 16);
  EXPECT_EQ(c.inserts - c.evictions, 16);
  EXPECT_EQ(c.inserts + c.refused, 40);

  o.safe_check = kv::SafeCheck::kError;
  KvRowStore strict(o, "layers[emb1].storage");
  strict.read(std::span<const Key>(keys).first(16), std::span<float>(rows).first(32));
  std::vector<Key> more = {100, 101};
  std::vector<float> two(4);
  // LFU: the held keys have score 1 like the newcomers: a newcomer replaces one (ties admit), so
  // raise the incumbents first.
  strict.read(std::span<const Key>(keys).first(16), std::span<float>(rows).first(32));
  try {
    strict.read(more, two);
    FAIL() << "expected an InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[emb1].storage.max_capacity"), std::string::npos) << e.what();
  }
}

TEST(RowStores, TieredTablesKeepEveryRowBeyondTheirFastTier) {
  kv::TableOptions o = options(4);
  o.bucket_capacity = 16;
  o.score_strategy = kv::ScoreStrategy::kStep;
  const CountingOptimizer optimizer(UpdateType::kLocal);
  for (const bool caching : {true, false}) {
    // A fast tier of 2 buckets (32 rows), 300 keys: the slow tier holds most of them.
    const auto store = make_tiered_row_store(o, TierOptions{caching, 32 * 5 * 4, ::testing::TempDir()}, "x");
    std::vector<Key> keys;
    for (Key k = 0; k < 300; ++k) keys.push_back(k * 7);
    std::vector<float> rows(keys.size() * 4), want(5), grads(keys.size() * 4, 0.25f);
    store->read(keys, rows);
    store->apply(keys, grads, optimizer, 1);
    EXPECT_EQ(store->size(), 300) << (caching ? "caching" : "hybrid");
    std::vector<float> row(4);
    for (const Key k : keys) {
      kv::initial_row(o.initializer, 99, 1000, static_cast<std::uint64_t>(k), 4, want);
      ASSERT_TRUE(store->row(k, row)) << "key " << k;
      for (std::size_t d = 0; d < 4; ++d) EXPECT_FLOAT_EQ(row[d], want[d] - 0.25f) << "key " << k;
    }
  }
  EXPECT_THROW(make_tiered_row_store(o, TierOptions{true, 100, ::testing::TempDir()}, "x"), InputError);  // < a bucket
}

// Evaluating, a two-tier store reads both tiers without moving anything: every trained key reads
// its row, wherever it lives; an unseen key reads the eval initializer and is not inserted; the
// size is unchanged and nothing is counted (the reads go through the tables' const find, which
// cannot promote).
TEST(RowStores, AnEvaluatingTieredStoreReadsBothTiersWithoutChangingThem) {
  kv::TableOptions o = options(4);
  o.bucket_capacity = 16;
  o.eval_initializer.mode = kv::InitializerMode::kConstant;
  o.eval_initializer.value = 0.5;
  const CountingOptimizer optimizer(UpdateType::kLocal);
  for (const bool caching : {true, false}) {
    const std::string what = caching ? "caching" : "hybrid";
    const auto store = make_tiered_row_store(o, TierOptions{caching, 32 * 5 * 4, ::testing::TempDir()}, "x");
    std::vector<Key> keys;
    for (Key k = 0; k < 300; ++k) keys.push_back(k * 7);
    std::vector<float> rows(keys.size() * 4), grads(keys.size() * 4, 0.25f);
    store->read(keys, rows);
    store->apply(keys, grads, optimizer, 1);
    std::vector<float> trained(keys.size() * 4);
    std::vector<float> row(4);
    for (std::size_t i = 0; i < keys.size(); ++i) {
      ASSERT_TRUE(store->row(keys[i], row)) << what;
      std::copy(row.begin(), row.end(), trained.begin() + static_cast<std::ptrdiff_t>(i * 4));
    }
    (void)store->take_counters();
    store->set_evaluating(true);
    std::vector<Key> asked(keys.rbegin(), keys.rend());
    asked.push_back(100001);
    std::vector<float> got(asked.size() * 4);
    store->read(asked, got);
    for (std::size_t i = 0; i + 1 < asked.size(); ++i)
      for (std::size_t d = 0; d < 4; ++d)
        ASSERT_EQ(got[i * 4 + d], trained[(keys.size() - 1 - i) * 4 + d]) << what << ": key " << asked[i];
    for (std::size_t d = 0; d < 4; ++d) EXPECT_EQ(got[(asked.size() - 1) * 4 + d], 0.5f) << what;
    store->set_evaluating(false);
    EXPECT_EQ(store->size(), 300) << what;
    EXPECT_FALSE(store->row(100001, row)) << what;
    const StoreCounters counters = store->take_counters();
    EXPECT_EQ(counters.hits + counters.misses + counters.inserts, 0) << what << ": the evaluation was counted";
  }
}

// The stores are host stores: each says so, and each refuses a device context where it is made
// (a GPU run must not quietly run its table on the host).
TEST(RowStores, EveryHostStoreReportsAHostContextAndRefusesADeviceOne) {
  const ExecutionContext device = ExecutionContext::for_device(0, nullptr);
  StaticRowStore fixed(keys_below(10), options(2), 0, 0, ExecutionContext::host(3));
  EXPECT_TRUE(fixed.execution_context().on_host());
  EXPECT_EQ(fixed.execution_context().threads, 3);
  KvRowStore dynamic(options(2), "layers[emb1].storage");
  EXPECT_TRUE(dynamic.execution_context().on_host());
  const auto message = [](const auto& make) {
    try {
      make();
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message([&] {
              StaticRowStore(keys_below(10), options(2), 0, 0, device);
            }).find("the static row store runs on the host, but its execution context is device memory (device 0)"),
            std::string::npos);
  EXPECT_NE(message([&] {
              KvRowStore(options(2), "layers[emb1].storage", device);
            }).find("layers[emb1].storage: the host KV table runs on the host, but its execution context is device"),
            std::string::npos);
  TierOptions tiers{true, 1 << 20, std::filesystem::temp_directory_path().string()};
  EXPECT_NE(message([&] {
              make_tiered_row_store(options(2), tiers, "layers[emb1].storage", device);
            }).find("layers[emb1].storage: the tiered tables runs on the host"),
            std::string::npos);
}

}  // namespace
}  // namespace embscale::embedding
