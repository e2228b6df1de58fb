// Dump and load of a KV table (kv/table_file.hpp): 2^20 entries at dim 32, float32, evaluation
// rows (8 + 8 + 128 = 144 bytes per entry, 151 MB of file), against the bare I/O of the same
// bytes (write + fsync + rename; read into memory) and the checksum alone. Quote dump / write and
// load / read: the rest is the format's cost (copying rows out of the table, checksums) and, for
// load, the table's (restore: hashing, inserting, growing).
//
// Run: build/bench/micro/embscale_micro_kv_dump [--benchmark_repetitions=3]
// Files go under std::filesystem::temp_directory_path() ($TMPDIR) and are removed at the end:
// point TMPDIR at the disk to be measured. bytes_per_second: file bytes; items_per_second:
// entries. Real time, one iteration each (a dump is 150 MB). Every run checks its result (the file
// size; the loaded table's size and a sample of rows) and reports an error otherwise.
#include <benchmark/benchmark.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <memory>
#include <random>
#include <vector>

#include "core/checksum.hpp"
#include "kv/host_kv_table.hpp"
#include "kv/table_file.hpp"

namespace {

namespace fs = std::filesystem;
using namespace embscale::kv;
using embscale::checksum64;

constexpr std::int64_t kEntries = std::int64_t{1} << 20;
constexpr std::int64_t kDim = 32;

TableOptions bench_options() {
  TableOptions o;
  o.dim = kDim;
  o.training = false;
  o.value_type = ValueType::kFloat32;
  o.max_capacity = 2 * kEntries;  // load factor 0.5, no growth during load
  o.score_strategy = ScoreStrategy::kCustomized;
  return o;
}

float value_of(std::uint64_t key, std::int64_t d) {
  return static_cast<float>(key % 1000) + static_cast<float>(d) / 64.0f;
}

struct Fixture {
  fs::path dir = fs::temp_directory_path() / ("embscale_kv_dump_bench_" + std::to_string(::getpid()));
  std::unique_ptr<HostKvTable<std::uint64_t>> table;
  std::vector<std::uint64_t> keys;

  Fixture() {
    fs::create_directories(dir);
    table = std::make_unique<HostKvTable<std::uint64_t>>(bench_options());
    std::mt19937_64 rng(1);
    keys.resize(static_cast<std::size_t>(kEntries));
    for (auto& k : keys) k = rng() >> 2;
    const std::size_t batch = 1 << 16;
    for (std::size_t at = 0; at < keys.size(); at += batch) {
      const std::span<const std::uint64_t> part(keys.data() + at, batch);
      std::vector<float> rows(batch * kDim);
      std::vector<std::uint64_t> scores(batch);
      for (std::size_t i = 0; i < batch; ++i) {
        scores[i] = part[i] & 0xffff;
        for (std::int64_t d = 0; d < kDim; ++d) rows[i * kDim + static_cast<std::size_t>(d)] = value_of(part[i], d);
      }
      table->insert_or_assign(part, rows, scores);
    }
    table->dump(dir / "reference");
  }
  ~Fixture() {
    std::error_code ignored;
    fs::remove_all(dir, ignored);
  }
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

void BM_Dump(benchmark::State& state) {
  Fixture& f = fixture();
  const auto path = f.dir / "dump";
  for (auto _ : state) f.table->dump(path);
  const auto bytes = fs::file_size(path);
  if (f.table->size() != kEntries) state.SkipWithError("the table does not hold 2^20 entries (duplicate keys?)");
  else if (bytes != fs::file_size(f.dir / "reference"))
    state.SkipWithError("the dump's size differs from the reference's");
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
  state.SetItemsProcessed(state.iterations() * kEntries);
}

void BM_Load(benchmark::State& state) {
  Fixture& f = fixture();
  const auto path = f.dir / "reference";
  std::int64_t loaded = 0;
  for (auto _ : state) {
    state.PauseTiming();
    auto target = std::make_unique<HostKvTable<std::uint64_t>>(bench_options());  // rows touched here
    state.ResumeTiming();
    loaded = target->load(path).inserted;
    state.PauseTiming();
    std::vector<float> rows(16 * kDim);
    std::vector<std::uint8_t> founds(16);
    target->find(std::span<const std::uint64_t>(f.keys.data(), 16), rows, founds);
    for (std::size_t i = 0; i < 16; ++i)
      if (!founds[i] || rows[i * kDim + 5] != value_of(f.keys[i], 5)) state.SkipWithError("a loaded row differs");
    target.reset();
    state.ResumeTiming();
  }
  if (loaded != kEntries) state.SkipWithError("load did not insert every entry");
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(fs::file_size(path)));
  state.SetItemsProcessed(state.iterations() * kEntries);
}

// As load reads a file: its size, then one read() loop into one buffer.
std::vector<char> file_bytes(const fs::path& path) {
  std::vector<char> bytes(fs::file_size(path));
  const int fd = ::open(path.c_str(), O_RDONLY);
  std::size_t done = 0;
  while (done < bytes.size()) {
    const ssize_t n = ::read(fd, bytes.data() + done, bytes.size() - done);
    if (n <= 0) break;
    done += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(done);
  return bytes;
}

// Baseline: the dump's bytes written as dump writes them (4 MiB writes, fsync, rename).
void BM_WriteBaseline(benchmark::State& state) {
  Fixture& f = fixture();
  const std::vector<char> bytes = file_bytes(f.dir / "reference");
  for (auto _ : state) {
    const auto temp = f.dir / ".raw.tmp";
    const int fd = ::open(temp.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    for (std::size_t at = 0; at < bytes.size(); at += 4 << 20) {
      const std::size_t n = std::min<std::size_t>(4 << 20, bytes.size() - at);
      if (::write(fd, bytes.data() + at, n) != static_cast<ssize_t>(n)) state.SkipWithError("write failed");
    }
    ::fsync(fd);
    ::close(fd);
    fs::rename(temp, f.dir / "raw");
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
  state.SetItemsProcessed(state.iterations() * kEntries);
}

// Baseline: the file read into memory (page cache warm, as for BM_Load after the dump).
void BM_ReadBaseline(benchmark::State& state) {
  Fixture& f = fixture();
  std::size_t size = 0;
  for (auto _ : state) {
    const std::vector<char> bytes = file_bytes(f.dir / "reference");
    size = bytes.size();
    benchmark::DoNotOptimize(bytes.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(size));
  state.SetItemsProcessed(state.iterations() * kEntries);
}

void BM_Checksum(benchmark::State& state) {
  const std::vector<char> bytes = file_bytes(fixture().dir / "reference");
  for (auto _ : state) benchmark::DoNotOptimize(checksum64(bytes.data(), bytes.size()));
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes.size()));
}

BENCHMARK(BM_Dump)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_WriteBaseline)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_Load)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_ReadBaseline)->Unit(benchmark::kMillisecond)->Iterations(1)->UseRealTime();
BENCHMARK(BM_Checksum)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
