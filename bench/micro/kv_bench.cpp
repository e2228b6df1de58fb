// The KV table micro-benchmarks: HierarchicalKV's benchmark shapes (batches of 2^20
// keys, dim 8 and 64, load factors 0.5 / 0.75 / 1.0; find, insert_or_assign, find_or_insert,
// insert_and_evict; 1 and 2 threads) on embscale's HostTable, and in the same binary and run the
// peers a CPU user would pick instead (absl::flat_hash_map, libcuckoo: kv_bench_peers.hpp) and
// the machine's limit (a random gather or scatter of as many rows: kv_bench_limit.hpp), with the
// same keys and rows (kv_bench_workload.hpp).
//
// Also kv_insert_steady/embscale/dim:<D>/lf:1.00/threads:<T>: evicting inserts into a full
// table that are never undone (run_steady, below); and kv_zipf_<op>/<variant>/dim:<D>/s:<s>/
// threads:<T>: the eviction-policy comparison's Zipf calls on a table with its best admission
// filter against the same table without one, in the same loop (kv_bench_zipf.hpp).
//
// Names: kv_<op>/<implementation>/dim:<D>/lf:<L>/threads:<T>, implementation one of embscale,
// absl, libcuckoo, gather_limit; items_per_second = keys per second (bytes_per_second: the keys
// and the rows, 8 + 4 D bytes per key). bench/micro/kv_ratios.py pairs them and checks the
// issue's targets. absl's writes run on 1 thread only (the map is not safe for concurrent
// writers); gather_limit gathers for find and find_or_insert and scatters for the inserts.
//
// Run: build/bench/micro/embscale_micro_kv --benchmark_repetitions=3
//        --benchmark_display_aggregates_only=true --benchmark_out=kv.json --benchmark_out_format=json
//      bench/micro/kv_ratios.py kv.json
// --kv_log2_batch=N scales everything down (batches of 2^N keys, tables of 2^(N+2) slots): the
// smoke test runs N = 12. --kv_bucket_capacity=N (a power of two in [16, 1024]; default 128, as
// HierarchicalKV) changes embscale's buckets, for diagnosis only. --kv_zipf_warmup_calls=N
// (default 1024) sets the Zipf benchmarks' warm-up calls (the smoke test runs 8).
// --benchmark_min_time defaults to kDefaultMinTime (below). Not with
// --benchmark_enable_random_interleaving: one (dim, load factor) is set up at a time (seconds,
// and up to ~5 GB resident at dim 64), in registration order.
//
// What one timed iteration is: one call with the whole batch (embscale: one batch call on
// ExecutionContext{threads}; peers: a loop over the keys, one at a time). A write is then undone
// with the timer paused (new keys erased, evicted or erased-victim keys put back: TableSide /
// Peer::restore), so every iteration starts from the same content at the same load factor, and
// checked (hits, inserts, evictions, a checksum of the rows read); a failed check reports an
// error instead of a time.
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "kv_bench_limit.hpp"
#include "kv_bench_peers.hpp"
#include "kv_bench_table.hpp"
#include "kv_bench_workload.hpp"
#include "kv_bench_zipf.hpp"

namespace {

using namespace embscale::kv_bench;
namespace kv = embscale::kv;

// Seconds of timed work per benchmark unless --benchmark_min_time is given: the whole suite
// (178 benchmarks, 3 repetitions) then takes 9.5 minutes on the 2-core development VM.
constexpr const char* kDefaultMinTime = "--benchmark_min_time=0.5";

enum class Op { kFind, kInsertOrAssign, kFindOrInsert, kInsertAndEvict };
enum class Impl { kEmbscale, kAbsl, kCuckoo, kLimit };

const char* name_of(Op op) {
  switch (op) {
    case Op::kFind: return "find";
    case Op::kInsertOrAssign: return "insert_or_assign";
    case Op::kFindOrInsert: return "find_or_insert";
    case Op::kInsertAndEvict: return "insert_and_evict";
  }
  return "?";
}

const char* name_of(Impl impl) {
  switch (impl) {
    case Impl::kEmbscale: return "embscale";
    case Impl::kAbsl: return "absl";
    case Impl::kCuckoo: return "libcuckoo";
    case Impl::kLimit: return "gather_limit";
  }
  return "?";
}

// Everything of one (dim, load factor): the table, the workload, and lazily the peers and the
// limit; output buffers shared by all.
struct Fixture {
  std::size_t dim;
  double load_factor;
  TableSide table;
  Workload work;
  std::vector<float> out;
  std::vector<std::uint8_t> founds;
  kv::Evicted evicted;
  PeerEvicted peer_evicted;
  std::unique_ptr<PeerRows> peer_rows;
  std::unique_ptr<AbslPeer> absl;
  std::unique_ptr<CuckooPeer> cuckoo;
  std::unique_ptr<GatherLimit> limit;

  Fixture(std::size_t d, double lf, Scale scale)
      : dim(d), load_factor(lf), table(d, lf, scale),
        work(make_workload(table.export_keys(), d, lf, scale, table.offered())), out(scale.batch * d),
        founds(scale.batch) {
    table.touch_hits(work);
    evicted.keys.reserve(scale.batch);
    evicted.scores.reserve(scale.batch);
    evicted.values.reserve(scale.batch * d);
    peer_evicted.keys.resize(scale.batch);
    peer_evicted.rows.resize(scale.batch * d);
  }

  PeerRows& rows() {
    if (!peer_rows) peer_rows = std::make_unique<PeerRows>(work);
    return *peer_rows;
  }
  AbslPeer& absl_peer() {
    if (!absl) absl = std::make_unique<AbslPeer>(work, rows());
    return *absl;
  }
  CuckooPeer& cuckoo_peer() {
    if (!cuckoo) cuckoo = std::make_unique<CuckooPeer>(work, rows());
    return *cuckoo;
  }
  GatherLimit& gather_limit() {
    if (!limit) limit = std::make_unique<GatherLimit>(dim, work.scale);
    return *limit;
  }
};

Scale g_scale;
std::unique_ptr<Fixture> g_fixture;
ZipfScale g_zipf_scale;
std::unique_ptr<ZipfFixture> g_zipf_fixture;

Fixture& fixture(std::size_t dim, double load_factor) {
  if (!g_fixture || g_fixture->dim != dim || g_fixture->load_factor != load_factor) {
    g_fixture.reset();  // free the previous one first: both would not fit at dim 64
    g_fixture = std::make_unique<Fixture>(dim, load_factor, g_scale);
  }
  return *g_fixture;
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error(what);
}

std::string counts(const kv::CallStats& s) {
  return "found " + std::to_string(s.found) + ", inserted " + std::to_string(s.inserted) + ", evicted " +
         std::to_string(s.evicted) + ", refused/mismatched " + std::to_string(s.refused);
}

// A write's counts against the workload: every present key found, every new key inserted.
void check_write(const kv::CallStats& s, const Workload& w, Op op, Impl impl) {
  const auto n_new = static_cast<std::int64_t>(w.new_keys.size());
  bool ok = s.found == static_cast<std::int64_t>(w.hits) && s.inserted == n_new && s.refused == 0;
  if (impl != Impl::kEmbscale && op == Op::kInsertAndEvict)
    ok = ok && s.evicted == static_cast<std::int64_t>(w.evicting);
  expect(ok, std::string(name_of(op)) + "/" + name_of(impl) + ": " + counts(s) + "; expected found " +
                 std::to_string(w.hits) + ", inserted " + std::to_string(n_new));
}

// The checksum of a read batch: find's rows, or find_or_insert's (hits, then 0.5 per new value).
void check_rows(const Fixture& f, Op op, const char* who) {
  const Workload& w = f.work;
  const double expected =
      op == Op::kFind ? w.find_checksum : w.write_hit_checksum + 0.5 * static_cast<double>(w.new_keys.size() * w.dim);
  const double got = sum_of(f.out);
  expect(got == expected, std::string(name_of(op)) + "/" + who + ": the rows read sum to " + std::to_string(got) +
                              ", expected " + std::to_string(expected));
}

void run_embscale(benchmark::State& state, Fixture& f, Op op, int threads) {
  kv::HostTable& t = f.table.table();
  const Workload& w = f.work;
  t.set_execution_context({threads, kMinKeysForThreads});
  std::fill(f.out.begin(), f.out.end(), 0.0f);
  if (op == Op::kFind) {
    kv::CallStats s;
    for (auto _ : state) s = t.find(w.find_keys, f.out, f.founds);
    expect(s.found == static_cast<std::int64_t>(w.find_keys.size()), "find/embscale: " + counts(s));
    check_rows(f, op, "embscale");
    return;
  }
  std::int64_t evicted = 0;
  for (auto _ : state) {
    kv::CallStats s;
    if (op == Op::kInsertOrAssign) s = t.insert_or_assign(w.write_keys, w.write_values);
    else if (op == Op::kFindOrInsert) s = t.find_or_insert(w.write_keys, f.out);
    else s = t.insert_and_evict(w.write_keys, w.write_values, {}, f.evicted);
    state.PauseTiming();
    check_write(s, w, op, Impl::kEmbscale);
    if (op == Op::kInsertAndEvict)
      expect(f.evicted.size() == static_cast<std::size_t>(s.evicted),
             "insert_and_evict/embscale: " + std::to_string(f.evicted.size()) + " entries returned, " + counts(s));
    evicted = s.evicted;
    f.table.restore(w, s.evicted);
    f.evicted.clear();
    state.ResumeTiming();
  }
  if (op == Op::kFindOrInsert) check_rows(f, op, "embscale");
  state.counters["evicted_per_call"] = static_cast<double>(evicted);
}

template <typename P> void run_peer(benchmark::State& state, Fixture& f, P& peer, Op op, Impl impl, int threads) {
  const Workload& w = f.work;
  std::fill(f.out.begin(), f.out.end(), 0.0f);
  if (op == Op::kFind) {
    kv::CallStats s;
    for (auto _ : state) s = peer.find(w.find_keys, f.out, f.founds, threads);
    expect(s.found == static_cast<std::int64_t>(w.find_keys.size()),
           std::string("find/") + name_of(impl) + ": " + counts(s));
    check_rows(f, op, name_of(impl));
    return;
  }
  std::int64_t evicted = 0;
  for (auto _ : state) {
    kv::CallStats s;
    if (op == Op::kInsertOrAssign) s = peer.insert_or_assign(w, threads);
    else if (op == Op::kFindOrInsert) s = peer.find_or_insert(w, f.out, threads);
    else s = peer.insert_and_evict(w, f.peer_evicted, threads);
    state.PauseTiming();
    check_write(s, w, op, impl);
    evicted = s.evicted;
    peer.restore(w, op == Op::kInsertAndEvict);
    state.ResumeTiming();
  }
  if (op == Op::kFindOrInsert) check_rows(f, op, name_of(impl));
  state.counters["evicted_per_call"] = static_cast<double>(evicted);
}

void run_limit(benchmark::State& state, Fixture& f, Op op, int threads) {
  GatherLimit& limit = f.gather_limit();
  std::fill(f.out.begin(), f.out.end(), 0.0f);
  if (op == Op::kFind || op == Op::kFindOrInsert) {
    for (auto _ : state) limit.gather(f.out, threads);
  } else {
    limit.gather(f.out, threads);  // the rows the scatter writes back where they were
    for (auto _ : state) limit.scatter(f.out, threads);
    std::fill(f.out.begin(), f.out.end(), 0.0f);
    limit.gather(f.out, threads);
  }
  const double got = sum_of(f.out);
  expect(got == limit.checksum(), std::string(name_of(op)) + "/gather_limit: the rows sum to " + std::to_string(got) +
                                      ", expected " + std::to_string(limit.checksum()));
}

void run(benchmark::State& state, Op op, Impl impl, std::size_t dim, double load_factor, int threads) {
  try {
    Fixture& f = fixture(dim, load_factor);
    switch (impl) {
      case Impl::kEmbscale: run_embscale(state, f, op, threads); break;
      case Impl::kAbsl: run_peer(state, f, f.absl_peer(), op, impl, threads); break;
      case Impl::kCuckoo: run_peer(state, f, f.cuckoo_peer(), op, impl, threads); break;
      case Impl::kLimit: run_limit(state, f, op, threads); break;
    }
  } catch (const std::exception& e) {
    g_fixture.reset();  // a failed write may have left its keys behind: the next one starts afresh
    state.SkipWithError(e.what());
    return;
  }
  const auto keys = static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(g_scale.batch);
  state.SetItemsProcessed(keys);
  state.SetBytesProcessed(keys * static_cast<std::int64_t>(8 + 4 * dim));
}

// kv_insert_steady/embscale/dim:D/lf:1.00/threads:T: the steady state of a full table in
// training, which the undone writes above never reach: every iteration inserts a fresh batch of
// new keys (made with the timer paused) into a table at max_capacity and is not undone, so each
// key evicts the bucket's oldest (TIMESTAMP) and buckets keep their victim shortlists between
// calls. embscale only: the peers do not evict.
void run_steady(benchmark::State& state, std::size_t dim, int threads) {
  kv::TableOptions options;
  options.dim = static_cast<std::int64_t>(dim);
  options.training = false;
  options.max_capacity = static_cast<std::int64_t>(g_scale.capacity());
  options.init_capacity = options.max_capacity;
  options.max_load_factor = 1.0;
  options.bucket_capacity = g_scale.bucket_capacity;
  options.score_strategy = kv::ScoreStrategy::kTimestamp;
  kv::HostTable table(options);
  table.set_execution_context({threads, 4096});
  std::vector<std::uint64_t> keys(g_scale.batch);
  const std::vector<float> values(keys.size() * dim, 0.5f);
  std::uint64_t next_key = 1;
  const auto fresh_keys = [&] {
    // n -> n x an odd constant mod 2^62 is a bijection: distinct keys, none of them reserved.
    for (auto& k : keys) k = (next_key++ * 0x9E3779B97F4A7C15ULL) & ((std::uint64_t{1} << 62) - 1);
  };
  while (table.size() < options.max_capacity) {  // fill: then every new key evicts
    fresh_keys();
    table.insert_or_assign(keys, values);
    if (next_key > 64 * g_scale.capacity()) break;
  }
  for (auto _ : state) {
    state.PauseTiming();
    fresh_keys();
    state.ResumeTiming();
    const kv::CallStats stats = table.insert_or_assign(keys, values);
    if (stats.inserted != static_cast<std::int64_t>(keys.size()) || stats.evicted != stats.inserted) {
      state.SkipWithError("a steady insert did not evict one entry per new key");
      break;
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * keys.size()));
}

// kv_zipf_<op>/<variant>/dim:D/s:S/threads:T (kv_bench_zipf.hpp): the admission filter's cost on
// the eviction-policy comparison's stream, against the same table without it, in the same loop.
void run_zipf_pair(benchmark::State& state, ZipfVariant variant, ZipfOp op, std::size_t dim, double s, int threads) {
  try {
    if (!g_zipf_fixture || g_zipf_fixture->variant != variant || g_zipf_fixture->dim != dim ||
        g_zipf_fixture->exponent != s) {
      g_fixture.reset();  // the main suite's tables: not needed here
      g_zipf_fixture.reset();
      g_zipf_fixture = std::make_unique<ZipfFixture>(variant, dim, s, g_zipf_scale);
    }
    run_zipf(state, *g_zipf_fixture, op, threads);
  } catch (const std::exception& e) {
    g_zipf_fixture.reset();
    state.SkipWithError(e.what());
  }
}

void register_zipf() {
  for (const double s : {0.8, 1.05, 1.2})
    for (const std::size_t dim : {8, 64})
      for (const ZipfVariant variant : {ZipfVariant::kTinyLfu, ZipfVariant::kFrequency})
        for (const int threads : {1, 2}) {
          if (threads == 2 && s != 1.05) continue;  // two threads at the default workload's exponent
          for (const ZipfOp op : {ZipfOp::kFindOrInsert, ZipfOp::kFind}) {
            char name[128];
            std::snprintf(name, sizeof name, "kv_zipf_%s/%s/dim:%zu/s:%.2f/threads:%d", name_of(op), name_of(variant),
                          dim, s, threads);
            benchmark::RegisterBenchmark(name,
                                         [=](benchmark::State& st) { run_zipf_pair(st, variant, op, dim, s, threads); })
                ->Unit(benchmark::kMillisecond)
                ->UseManualTime();
          }
        }
}

void register_all() {
  const Op ops[] = {Op::kFind, Op::kInsertOrAssign, Op::kFindOrInsert, Op::kInsertAndEvict};
  const Impl impls[] = {Impl::kEmbscale, Impl::kAbsl, Impl::kCuckoo, Impl::kLimit};
  for (const std::size_t dim : {8, 64})
    for (const double lf : {0.5, 0.75, 1.0})
      for (const Op op : ops)
        for (const Impl impl : impls)
          for (const int threads : {1, 2}) {
            if (impl == Impl::kAbsl && op != Op::kFind && threads > 1) continue;  // not thread-safe
            char name[128];
            std::snprintf(name, sizeof name, "kv_%s/%s/dim:%zu/lf:%.2f/threads:%d", name_of(op), name_of(impl), dim, lf,
                          threads);
            benchmark::RegisterBenchmark(name, [=](benchmark::State& s) { run(s, op, impl, dim, lf, threads); })
                ->Unit(benchmark::kMillisecond)
                ->UseRealTime();
          }
  for (const std::size_t dim : {8, 64})
    for (const int threads : {1, 2}) {
      char name[128];
      std::snprintf(name, sizeof name, "kv_insert_steady/embscale/dim:%zu/lf:1.00/threads:%d", dim, threads);
      benchmark::RegisterBenchmark(name, [=](benchmark::State& s) { run_steady(s, dim, threads); })
          ->Unit(benchmark::kMillisecond)
          ->UseRealTime();
    }
  register_zipf();
}

}  // namespace

int main(int argc, char** argv) {
  // Our flags first (removed), then a default min_time unless one is given.
  std::vector<char*> args;
  bool min_time = false;
  for (int i = 0; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--kv_log2_batch=", 0) == 0) {
      const int log2 = std::atoi(arg.c_str() + std::strlen("--kv_log2_batch="));
      if (log2 < 8 || log2 > 24) {
        std::fprintf(stderr, "embscale_micro_kv: --kv_log2_batch=%d: expected 8 .. 24\n", log2);
        return 2;
      }
      g_scale.batch = std::size_t{1} << log2;
      continue;
    }
    if (arg.rfind("--kv_bucket_capacity=", 0) == 0) {  // a diagnostic: the names do not change
      g_scale.bucket_capacity = std::atoi(arg.c_str() + std::strlen("--kv_bucket_capacity="));
      continue;
    }
    if (arg.rfind("--kv_zipf_warmup_calls=", 0) == 0) {
      const int calls = std::atoi(arg.c_str() + std::strlen("--kv_zipf_warmup_calls="));
      if (calls < 0 || calls > 1000000) {
        std::fprintf(stderr, "embscale_micro_kv: --kv_zipf_warmup_calls=%d: expected 0 .. 1000000\n", calls);
        return 2;
      }
      g_zipf_scale.warmup_calls = calls;
      continue;
    }
    if (arg.rfind("--benchmark_min_time", 0) == 0) min_time = true;
    args.push_back(argv[i]);
  }
  std::string default_min_time = kDefaultMinTime;
  if (!min_time) args.push_back(default_min_time.data());
  int n = static_cast<int>(args.size());
  benchmark::Initialize(&n, args.data());
  if (benchmark::ReportUnrecognizedArguments(n, args.data())) return 1;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  g_fixture.reset();
  g_zipf_fixture.reset();
  return 0;
}
