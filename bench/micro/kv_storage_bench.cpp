// The slow tier's throughput: RocksDbStorage::insert of 2^18 new entries and find of all of them
// (row width 64, calls of 4096 keys), against bare RocksDB doing the same with the same bytes
// and options (kv/rocksdb_layout.hpp): WriteBatch puts and MultiGet, without the storage's
// bookkeeping (the presence reads and the count record that keep size() exact and
// crash-consistent). The bare numbers are the baseline; quote the ratio.
//
// Run: build/bench/micro/embscale_micro_kv_storage [--benchmark_repetitions=3]
// Files go under std::filesystem::temp_directory_path() ($TMPDIR) and are removed at the end:
// point TMPDIR at the disk to be measured. items_per_second = entries/s. Bytes model: 8 (key)
// + 8 (score) + 4 * 64 (row) = 272 bytes per entry. Real time (RocksDB flushes and compacts on
// its own threads). Every run checks its result (size, every key found, a checksum of the rows)
// and reports an error otherwise.
#include <benchmark/benchmark.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/hash.hpp"
#include "kv/rocksdb_layout.hpp"
#include "kv/rocksdb_storage.hpp"

namespace {

namespace fs = std::filesystem;
namespace layout = embscale::kv::rocksdb_layout;
using embscale::kv::RocksDbOptions;
using embscale::kv::RocksDbStorage;

constexpr std::size_t kEntries = std::size_t{1} << 18;
constexpr std::size_t kDim = 64;
constexpr std::size_t kCall = 4096;  // keys per call
constexpr std::int64_t kBytesPerEntry = 8 + 8 + 4 * kDim;

// 2^18 distinct keys (mix64 is a bijection), their rows and scores, and a shuffled order for
// the lookups with the checksum of the rows read in that order.
struct Workload {
  std::vector<std::uint64_t> keys, scores, find_keys;
  std::vector<float> values;
  double find_checksum = 0;

  Workload() {
    std::mt19937_64 rng(20261201);
    std::uniform_real_distribution<float> value_of(-1.0f, 1.0f);
    for (std::size_t i = 0; i < kEntries; ++i) {
      keys.push_back(embscale::mix64(i));
      scores.push_back(i);
    }
    values.resize(kEntries * kDim);
    for (auto& v : values) v = value_of(rng);
    std::vector<std::size_t> order(kEntries);
    std::iota(order.begin(), order.end(), std::size_t{0});
    std::shuffle(order.begin(), order.end(), rng);
    for (const auto i : order) {
      find_keys.push_back(keys[i]);
      for (std::size_t d = 0; d < kDim; ++d) find_checksum += values[i * kDim + d];
    }
  }
};

const Workload& workload() {
  static const Workload w;
  return w;
}

fs::path bench_directory() {
  static const fs::path dir = fs::temp_directory_path() / ("embscale_kv_storage_bench_" + std::to_string(::getpid()));
  return dir;
}

// A bare RocksDB database of the storage's options: the default family holds the entries.
std::unique_ptr<rocksdb::DB> open_bare(const fs::path& path, bool create,
                                       std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  const RocksDbOptions o;
  auto db_options = layout::db_options(o);
  db_options.create_if_missing = create;
  db_options.create_missing_column_families = create;
  const auto cache = rocksdb::NewLRUCache(static_cast<std::size_t>(o.block_cache_bytes));
  // The storage's database has the meta family too; opening it raw means naming it.
  const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
      {rocksdb::kDefaultColumnFamilyName, layout::entry_family_options(o, cache)},
      {layout::kMetaFamily, rocksdb::ColumnFamilyOptions()}};
  rocksdb::DB* db = nullptr;
  const auto status = rocksdb::DB::Open(db_options, path.string(), families, &handles, &db);
  if (!status.ok()) throw std::runtime_error(path.string() + ": " + status.ToString());
  return std::unique_ptr<rocksdb::DB>(db);
}

void close_bare(std::unique_ptr<rocksdb::DB>& db, std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  for (auto* h : handles) (void)db->DestroyColumnFamilyHandle(h);
  handles.clear();
  (void)db->Close();
  db.reset();
}

void insert_storage(RocksDbStorage& storage, const Workload& w) {
  for (std::size_t b = 0; b < kEntries; b += kCall)
    storage.insert(std::span(w.keys).subspan(b, kCall), std::span(w.values).subspan(b * kDim, kCall * kDim),
                   std::span(w.scores).subspan(b, kCall));
}

void insert_bare(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* entries, const Workload& w) {
  std::string value(layout::value_bytes(kDim), '\0');
  for (std::size_t b = 0; b < kEntries; b += kCall) {
    rocksdb::WriteBatch batch;
    for (std::size_t i = b; i < b + kCall; ++i) {
      layout::encode_u64_le(value.data(), w.scores[i]);
      layout::encode_floats_le(value.data() + layout::kScoreBytes, w.values.data() + i * kDim, kDim);
      const auto key = layout::encode_key(w.keys[i]);
      (void)batch.Put(entries, rocksdb::Slice(key.data(), key.size()), value);
    }
    const auto status = db.Write(rocksdb::WriteOptions(), &batch);
    if (!status.ok()) throw std::runtime_error(status.ToString());
  }
}

// Finds every key (calls of kCall); returns the checksum of the rows, or NaN when a key is missing.
double find_storage(const RocksDbStorage& storage, const Workload& w) {
  std::vector<float> rows(kCall * kDim);
  std::vector<std::uint8_t> founds(kCall);
  double sum = 0;
  for (std::size_t b = 0; b < kEntries; b += kCall) {
    storage.find(std::span(w.find_keys).subspan(b, kCall), rows, founds, {});
    if (std::find(founds.begin(), founds.end(), 0) != founds.end()) return std::numeric_limits<double>::quiet_NaN();
    for (const float v : rows) sum += v;
  }
  return sum;
}

double find_bare(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* entries, const Workload& w) {
  std::vector<std::array<char, layout::kKeyBytes>> key_bytes(kCall);
  std::vector<rocksdb::Slice> slices(kCall);
  std::vector<rocksdb::PinnableSlice> values(kCall);
  std::vector<rocksdb::Status> statuses(kCall);
  std::vector<float> row(kDim);
  double sum = 0;
  for (std::size_t b = 0; b < kEntries; b += kCall) {
    for (std::size_t j = 0; j < kCall; ++j) {
      key_bytes[j] = layout::encode_key(w.find_keys[b + j]);
      slices[j] = rocksdb::Slice(key_bytes[j].data(), layout::kKeyBytes);
    }
    db.MultiGet(rocksdb::ReadOptions(), entries, kCall, slices.data(), values.data(), statuses.data());
    for (std::size_t j = 0; j < kCall; ++j) {
      if (!statuses[j].ok()) return std::numeric_limits<double>::quiet_NaN();
      layout::decode_floats_le(row.data(), values[j].data() + layout::kScoreBytes, kDim);
      for (const float v : row) sum += v;
      values[j].Reset();
    }
  }
  return sum;
}

void set_counters(benchmark::State& state) {
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * kEntries));
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations() * kEntries) * kBytesPerEntry);
}

void insert_rocksdb(benchmark::State& state) {
  const auto& w = workload();
  const auto path = bench_directory() / "insert";
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(path);
    auto storage = std::make_unique<RocksDbStorage>(path, kDim);
    state.ResumeTiming();
    insert_storage(*storage, w);
    state.PauseTiming();
    if (storage->size() != static_cast<std::int64_t>(kEntries))
      state.SkipWithError("size() is not the entries inserted");
    storage.reset();
    state.ResumeTiming();
  }
  set_counters(state);
}

void insert_rocksdb_bare(benchmark::State& state) {
  const auto& w = workload();
  const auto path = bench_directory() / "insert_bare";
  for (auto _ : state) {
    state.PauseTiming();
    fs::remove_all(path);
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    auto db = open_bare(path, /*create=*/true, handles);
    state.ResumeTiming();
    insert_bare(*db, handles[0], w);
    state.PauseTiming();
    close_bare(db, handles);
    state.ResumeTiming();
  }
  set_counters(state);
}

// Both find benchmarks read the same database, written once through the storage.
fs::path find_database() {
  static const fs::path path = [] {
    const auto p = bench_directory() / "find";
    RocksDbStorage storage(p, kDim);
    insert_storage(storage, workload());
    return p;
  }();
  return path;
}

void find_rocksdb(benchmark::State& state) {
  const auto& w = workload();
  const RocksDbStorage storage(find_database(), kDim);
  (void)find_storage(storage, w);  // warm the block cache: every iteration reads a warm one
  for (auto _ : state) {
    const double sum = find_storage(storage, w);
    if (sum != w.find_checksum) state.SkipWithError("find returned other rows than were inserted");
  }
  set_counters(state);
}

void find_rocksdb_bare(benchmark::State& state) {
  const auto& w = workload();
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  auto db = open_bare(find_database(), /*create=*/false, handles);
  (void)find_bare(*db, handles[0], w);
  for (auto _ : state) {
    const double sum = find_bare(*db, handles[0], w);
    if (sum != w.find_checksum) state.SkipWithError("MultiGet returned other rows than were inserted");
  }
  close_bare(db, handles);
  set_counters(state);
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  const std::string dim = "/dim:" + std::to_string(kDim);
  const auto add = [](const std::string& name, void (*fn)(benchmark::State&), int iterations) {
    benchmark::RegisterBenchmark(name.c_str(), fn)
        ->Unit(benchmark::kMillisecond)
        ->UseRealTime()
        ->Iterations(iterations);
  };
  add("kv_storage_insert/rocksdb" + dim, insert_rocksdb, 2);
  add("kv_storage_insert/rocksdb_bare" + dim, insert_rocksdb_bare, 2);
  add("kv_storage_find/rocksdb" + dim, find_rocksdb, 3);
  add("kv_storage_find/rocksdb_bare" + dim, find_rocksdb_bare, 3);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  fs::remove_all(bench_directory());
  return 0;
}
