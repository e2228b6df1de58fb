// Eviction oracles (lib/sim) against the table they shadow: simulated accesses per
// second of each oracle on one stream, beside kv::HostTable::find_or_insert of the same calls.
//
// Stream: Zipf(1.05) over 10^6 keys (workloads' sampler, key = rank - 1), cut into calls of 4096
// distinct keys (a draw that repeats a key of its call is dropped), 2048 calls: 8.4 * 10^6
// accesses. Capacity 2^17 keys everywhere. Each iteration feeds the whole stream to a fresh oracle
// (or an emptied table): growth of the per-key arrays is part of the cost, as in a run.
//   sim/lru, sim/lfu                       LruOracle, LfuOracle::access per call
//   sim/score_retention/<STRATEGY>         ScoreRetentionOracle::access (STEP, LFU)
//   sim/belady/append                      BeladyOracle::append (recording the stream)
//   sim/belady/hits_per_call               BeladyOracle::hits_per_call(2^17) on the recorded stream
//   host_table/find_or_insert              the baseline: HostTable, 128-slot buckets, STEP scores,
//                                          dim 32 floats, training, one thread
// items_per_second: accesses per second of CPU time, one core. Self-checks (an error row when
// one fails): every oracle's hits are at most MIN's; LRU's hits agree with its own hit_ratio_at;
// the table's found + inserted + refused account for every key.
//
// Run: build/bench/micro/embscale_micro_sim --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <numeric>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "kv/host_table.hpp"
#include "sim/belady_oracle.hpp"
#include "sim/lfu_oracle.hpp"
#include "sim/lru_oracle.hpp"
#include "sim/score_retention_oracle.hpp"
#include "workloads/zipf_sampler.hpp"

namespace {

using embscale::sim::BeladyOracle;

constexpr std::int64_t kKeys = 1'000'000;
constexpr double kExponent = 1.05;
constexpr std::size_t kCallKeys = 4096;
constexpr std::size_t kCalls = 2048;
constexpr std::int64_t kCapacity = std::int64_t{1} << 17;
constexpr std::int64_t kDim = 32;

// The calls, flattened: call c is keys[c * kCallKeys, (c + 1) * kCallKeys).
const std::vector<std::int64_t>& stream() {
  static const std::vector<std::int64_t> keys = [] {
    const embscale::workloads::ZipfSampler sampler(kKeys, kExponent);
    embscale::RngCursor rng(embscale::CounterRng(2015, 0));
    std::vector<std::int64_t> out;
    out.reserve(kCalls * kCallKeys);
    std::vector<std::uint32_t> in_call(static_cast<std::size_t>(kKeys), ~std::uint32_t{0});
    for (std::uint32_t c = 0; c < kCalls; ++c) {
      for (std::size_t n = 0; n < kCallKeys;) {
        const std::int64_t key = sampler(rng) - 1;
        if (in_call[static_cast<std::size_t>(key)] == c) continue;  // distinct within the call
        in_call[static_cast<std::size_t>(key)] = c;
        out.push_back(key);
        ++n;
      }
    }
    return out;
  }();
  return keys;
}

std::span<const std::int64_t> call(std::size_t c) { return std::span(stream()).subspan(c * kCallKeys, kCallKeys); }
constexpr auto kAccesses = static_cast<std::int64_t>(kCalls * kCallKeys);

// MIN's hits on the stream (computed once, untimed): the bound every oracle's hits must respect.
std::int64_t belady_hits() {
  static const std::int64_t hits = [] {
    BeladyOracle oracle;
    for (std::size_t c = 0; c < kCalls; ++c) oracle.append(call(c));
    const auto per_call = oracle.hits_per_call(kCapacity);
    return std::accumulate(per_call.begin(), per_call.end(), std::int64_t{0});
  }();
  return hits;
}

void finish(benchmark::State& state, std::int64_t hits) {
  state.SetItemsProcessed(state.iterations() * kAccesses);
  state.counters["hit_ratio"] = static_cast<double>(hits) / static_cast<double>(kAccesses);
  if (hits > belady_hits()) state.SkipWithError("more hits than Belady's MIN");
}

// Feeds the stream to a fresh Oracle each iteration (its construction untimed).
template <typename Oracle, typename Make> void oracle_bench(benchmark::State& state, Make make) {
  stream();
  belady_hits();
  std::int64_t hits = 0;
  for (auto _ : state) {
    state.PauseTiming();
    Oracle oracle = make();
    state.ResumeTiming();
    hits = 0;
    for (std::size_t c = 0; c < kCalls; ++c) hits += oracle.access(call(c));
    benchmark::DoNotOptimize(hits);
    if constexpr (std::is_same_v<Oracle, embscale::sim::LruOracle>) {
      state.PauseTiming();
      if (oracle.hit_ratio_at(kCapacity) != static_cast<double>(hits) / static_cast<double>(kAccesses))
        state.SkipWithError("LRU hits disagree with hit_ratio_at");
      state.ResumeTiming();
    }
  }
  finish(state, hits);
}

void lru(benchmark::State& state) {
  oracle_bench<embscale::sim::LruOracle>(state, [] { return embscale::sim::LruOracle(kCapacity); });
}
void lfu(benchmark::State& state) {
  oracle_bench<embscale::sim::LfuOracle>(state, [] { return embscale::sim::LfuOracle(kCapacity); });
}
void score_retention(benchmark::State& state, embscale::kv::ScoreStrategy strategy) {
  oracle_bench<embscale::sim::ScoreRetentionOracle>(
      state, [strategy] { return embscale::sim::ScoreRetentionOracle(kCapacity, strategy); });
}

void belady_append(benchmark::State& state) {
  stream();
  for (auto _ : state) {
    BeladyOracle oracle;
    for (std::size_t c = 0; c < kCalls; ++c) oracle.append(call(c));
    benchmark::DoNotOptimize(oracle.accesses());
    state.PauseTiming();
    if (oracle.accesses() != kAccesses) state.SkipWithError("Belady lost accesses");
    {
      BeladyOracle discard = std::move(oracle);  // its memory is freed untimed
    }
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kAccesses);
}

void belady_hits_per_call(benchmark::State& state) {
  BeladyOracle oracle;
  for (std::size_t c = 0; c < kCalls; ++c) oracle.append(call(c));
  std::int64_t hits = 0;
  for (auto _ : state) {
    const auto per_call = oracle.hits_per_call(kCapacity);
    hits = std::accumulate(per_call.begin(), per_call.end(), std::int64_t{0});
  }
  state.SetItemsProcessed(state.iterations() * kAccesses);
  state.counters["hit_ratio"] = static_cast<double>(hits) / static_cast<double>(kAccesses);
  if (hits != belady_hits()) state.SkipWithError("Belady's hits changed between runs");
}

void host_table(benchmark::State& state) {
  embscale::kv::TableOptions o;
  o.dim = kDim;
  o.max_capacity = kCapacity;
  o.init_capacity = kCapacity;  // no growth: the table is the oracles' capacity from the start
  o.bucket_capacity = 128;
  o.score_strategy = embscale::kv::ScoreStrategy::kStep;
  o.training = true;
  o.initializer = {embscale::kv::InitializerMode::kConstant, 0.0, 1.0, 0.0, 0.0, 0.5, {}};
  embscale::kv::HostTable table(o);
  table.set_execution_context({1, 4096});
  // The keys as the table takes them (an int64 key is its bit pattern), converted untimed.
  const std::vector<std::uint64_t> keys(stream().begin(), stream().end());
  std::vector<float> values(kCallKeys * static_cast<std::size_t>(table.row_width()));
  std::vector<std::uint8_t> founds(kCallKeys);
  belady_hits();
  std::int64_t hits = 0;
  for (auto _ : state) {
    state.PauseTiming();
    table.clear();
    state.ResumeTiming();
    embscale::kv::CallStats total;
    for (std::size_t c = 0; c < kCalls; ++c)
      total += table.find_or_insert(std::span(keys).subspan(c * kCallKeys, kCallKeys), values, founds);
    hits = total.found;
    if (total.found + total.inserted + total.refused + total.not_admitted != kAccesses)
      state.SkipWithError("the table's call stats miss keys");
  }
  finish(state, hits);
}

BENCHMARK(lru)->Name("sim/lru")->Unit(benchmark::kMillisecond);
BENCHMARK(lfu)->Name("sim/lfu")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(score_retention, step, embscale::kv::ScoreStrategy::kStep)
    ->Name("sim/score_retention/STEP")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(score_retention, lfu, embscale::kv::ScoreStrategy::kLfu)
    ->Name("sim/score_retention/LFU")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(belady_append)->Name("sim/belady/append")->Unit(benchmark::kMillisecond);
BENCHMARK(belady_hits_per_call)->Name("sim/belady/hits_per_call")->Unit(benchmark::kMillisecond);
BENCHMARK(host_table)->Name("host_table/find_or_insert")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
