// Calls from several threads at once, as kv/group_mutex.hpp allows: finds and exports run
// together, assigns and find_and_update run together, inserts, erases and rehash run alone.
// Built twice: in the unit tests, and alone under ThreadSanitizer with clang + libomp + Archer
// (scripts/tsan-check), where a missing lock is a reported race. The checks here hold only if
// the groups are kept: no reader sees a torn row, and no concurrent score update is lost.
#include <gtest/gtest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <random>
#include <thread>
#include <vector>

#include "kv/host_table.hpp"
#include "kv/table_file.hpp"

namespace embscale::kv {
namespace {

constexpr std::int64_t kDim = 8;

TableOptions concurrent_options(ScoreStrategy strategy) {
  TableOptions o;
  o.dim = kDim;
  o.bucket_capacity = 32;
  o.init_capacity = 256;
  o.max_capacity = 1 << 14;
  o.score_strategy = strategy;
  return o;
}

// A row whose values are all `tag`: a reader seeing two different values saw a torn write.
std::vector<float> rows_of(std::size_t n, float tag) { return std::vector<float>(n * kDim, tag); }

bool whole(std::span<const float> row) {
  return std::all_of(row.begin(), row.end(), [&](float v) { return v == row[0]; });
}

TEST(KvConcurrency, ReadersNeverSeeTornRowsWhileAssignsInsertsAndRehashesRun) {
  HostTable table(concurrent_options(ScoreStrategy::kStep));
  table.set_execution_context({2, 64});  // calls are themselves parallel (OpenMP inside threads)
  std::vector<std::uint64_t> base(512);
  for (std::uint64_t k = 0; k < base.size(); ++k) base[k] = k;
  table.insert_or_assign(base, rows_of(base.size(), 0.0f));

  std::atomic<bool> stop = false;
  std::atomic<std::int64_t> torn = 0, reads = 0;
  auto reader = [&](int id) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(id));
    std::vector<std::uint64_t> keys(256);
    std::vector<float> out(keys.size() * kDim);
    std::vector<std::uint8_t> founds(keys.size());
    while (!stop.load()) {
      for (auto& k : keys) k = rng() % 4096;
      table.find(keys, out, founds);
      for (std::size_t i = 0; i < keys.size(); ++i)
        if (founds[i] && !whole(std::span<const float>(out).subspan(i * kDim, kDim))) ++torn;
      Evicted exported;
      table.export_batch(0, 1024, exported.keys, exported.values, exported.scores);
      for (std::size_t i = 0; i < exported.size(); ++i)
        if (!whole(std::span<const float>(exported.values).subspan(i * kDim, kDim))) ++torn;
      ++reads;
    }
  };
  auto assigner = [&](int id) {
    for (int round = 0; round < 60; ++round) {
      std::vector<float> rows = rows_of(base.size(), static_cast<float>(id * 1000 + round));
      table.assign(base, rows);
    }
  };
  auto inserter = [&] {
    std::mt19937_64 rng(7);
    for (int round = 0; round < 40; ++round) {
      std::vector<std::uint64_t> fresh(128);
      for (auto& k : fresh) k = 512 + rng() % 3584;
      table.insert_or_assign(fresh, rows_of(fresh.size(), static_cast<float>(-round)));
      if (round % 3 == 0) table.erase(std::span<const std::uint64_t>(fresh).first(32));
      if (round == 20) table.reserve(table.capacity() * 4);  // a rehash while others wait
    }
  };
  std::vector<std::thread> threads;
  threads.emplace_back(reader, 1);
  threads.emplace_back(reader, 2);
  threads.emplace_back(assigner, 1);
  threads.emplace_back(assigner, 2);
  std::thread writer(inserter);
  threads[2].join();
  threads[3].join();
  writer.join();
  stop = true;
  threads[0].join();
  threads[1].join();
  EXPECT_EQ(torn.load(), 0);
  EXPECT_GT(reads.load(), 0);
  // The base keys were never erased or evicted (capacity is ample): all present, whole rows.
  std::vector<float> out(base.size() * kDim);
  std::vector<std::uint8_t> founds(base.size());
  EXPECT_EQ(table.find(base, out, founds).found, static_cast<std::int64_t>(base.size()));
  for (std::size_t i = 0; i < base.size(); ++i) EXPECT_TRUE(whole(std::span<const float>(out).subspan(i * kDim, kDim)));
}

TEST(KvConcurrency, ConcurrentAssignsOfTheSameKeysLeaveWholeRows) {
  // Four assigners write different tags to the same keys at once (the update group admits them
  // together): each row must end up whole, one writer's tag, never a mix.
  HostTable table(concurrent_options(ScoreStrategy::kStep));
  table.set_execution_context({2, 64});
  std::vector<std::uint64_t> keys(400);
  for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = k * 31;
  table.insert_or_assign(keys, rows_of(keys.size(), -1.0f));
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int r = 0; r < 40; ++r) table.assign(keys, rows_of(keys.size(), static_cast<float>(t * 100 + r)));
    });
  for (auto& t : threads) t.join();
  std::vector<float> out(keys.size() * kDim);
  std::vector<std::uint8_t> founds(keys.size());
  table.find(keys, out, founds);
  for (std::size_t i = 0; i < keys.size(); ++i)
    EXPECT_TRUE(whole(std::span<const float>(out).subspan(i * kDim, kDim))) << "key " << keys[i];
}

TEST(KvConcurrency, ConcurrentUpdatesLoseNoScoreIncrement) {
  // LFU: each find_and_update hit adds 1. Four threads hit the same keys at once (the same
  // buckets): the per-bucket locks must make every increment count.
  HostTable table(concurrent_options(ScoreStrategy::kLfu));
  table.set_execution_context({2, 64});
  std::vector<std::uint64_t> keys(300);
  for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = k * 17;
  table.insert_or_assign(keys, rows_of(keys.size(), 1.0f));  // score 1 each
  constexpr int kThreads = 4, kRounds = 25;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      std::vector<float> out(keys.size() * kDim);
      std::vector<std::uint8_t> founds(keys.size());
      for (int r = 0; r < kRounds; ++r) {
        table.find_and_update(keys, out, founds);
        table.assign(keys, rows_of(keys.size(), static_cast<float>(r)));
      }
    });
  for (auto& t : threads) t.join();
  std::vector<float> out(keys.size() * kDim);
  std::vector<std::uint8_t> founds(keys.size());
  std::vector<std::uint64_t> scores(keys.size());
  table.find(keys, out, founds, scores);
  for (std::size_t i = 0; i < keys.size(); ++i) EXPECT_EQ(scores[i], 1u + kThreads * kRounds) << keys[i];
}

TEST(KvConcurrency, ConcurrentHitsLoseNoSightingOfTheAdmissionSketch) {
  // find_and_update and assign_scores record a sighting in the key's bucket bank, under the
  // bucket's lock: four threads hitting the same keys must leave every count exact.
  TableOptions o = concurrent_options(ScoreStrategy::kLfu);
  o.admission.kind = AdmissionOptions::Kind::kTinyLfu;
  o.admission.max_count = 255;
  o.admission.aging_factor = 0.0;
  o.admission.cells_per_slot = 64.0;  // 2048 cells a row: no key shares all four of its cells
  HostTable table(o);
  table.set_execution_context({2, 64});
  std::vector<std::uint64_t> keys(300);
  for (std::uint64_t k = 0; k < keys.size(); ++k) keys[k] = k * 17;
  table.insert_or_assign(keys, rows_of(keys.size(), 1.0f));  // free slots: one sighting each
  constexpr int kThreads = 4, kRounds = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      std::vector<float> out(keys.size() * kDim);
      std::vector<std::uint8_t> founds(keys.size());
      const std::vector<std::uint64_t> scores(keys.size(), 0);
      for (int r = 0; r < kRounds; ++r) {
        table.find_and_update(keys, out, founds);
        table.assign_scores(keys, scores);
      }
    });
  for (auto& t : threads) t.join();
  for (const auto key : keys) EXPECT_EQ(table.admission_estimate(key), 1 + 2 * kThreads * kRounds) << key;
}

// A dump is one read call: while inserts of whole batches and assigns of whole rows run, every
// dump holds whole batches only (a prefix of them) and whole rows.
TEST(KvConcurrency, ADumpIsASnapshotWhileInsertsAndAssignsRun) {
  const auto dir = std::filesystem::temp_directory_path() / ("embscale_kv_dump_snapshot_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  TableOptions options = concurrent_options(ScoreStrategy::kStep);
  options.max_capacity = 1 << 16;  // room for every batch: nothing is evicted
  HostTable table(options);
  constexpr std::uint64_t kBatch = 64;
  constexpr int kBatches = 200;
  std::atomic<int> inserted = 0;
  std::thread inserter([&] {
    for (int b = 0; b < kBatches; ++b) {
      std::vector<std::uint64_t> keys(kBatch);
      for (std::uint64_t i = 0; i < kBatch; ++i) keys[i] = static_cast<std::uint64_t>(b) * kBatch + i;
      table.insert_or_assign(keys, rows_of(kBatch, static_cast<float>(b)));
      inserted = b + 1;
      std::this_thread::sleep_for(std::chrono::microseconds(500));  // several dumps meet the inserts
    }
  });
  std::thread assigner([&] {
    std::vector<std::uint64_t> first(kBatch);
    for (std::uint64_t i = 0; i < kBatch; ++i) first[i] = i;
    for (int r = 0; r < 200 && inserted.load() < kBatches; ++r)
      table.assign(first, rows_of(kBatch, static_cast<float>(1000 + r)));
  });
  int dumps = 0;
  do {
    dump(table, KeyType::kUint64, dir / "snapshot");
    ++dumps;
    HostTable copy(options);
    load(copy, KeyType::kUint64, dir / "snapshot");
    const std::int64_t n = copy.size();
    EXPECT_EQ(n % static_cast<std::int64_t>(kBatch), 0) << "a dump holds part of an insert call";
    std::vector<std::uint64_t> keys(static_cast<std::size_t>(n));
    for (std::size_t i = 0; i < keys.size(); ++i) keys[i] = i;
    std::vector<float> out(keys.size() * kDim);
    std::vector<std::uint8_t> founds(keys.size());
    EXPECT_EQ(copy.find(keys, out, founds).found, n) << "the dumped keys are not a prefix of the batches";
    for (std::size_t i = 0; i < keys.size(); ++i)
      EXPECT_TRUE(whole(std::span<const float>(out).subspan(i * kDim, kDim))) << "torn row of key " << i;
  } while (inserted.load() < kBatches);
  inserter.join();
  assigner.join();
  EXPECT_GT(dumps, 1);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace embscale::kv
