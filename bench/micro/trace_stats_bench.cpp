// Trace statistics (workloads/trace_stats.hpp) over 10^7 accesses: the whole collector
// (add + finish) with and without reuse distances, against the bare minimum of the same pass,
// counting accesses per key in a std::unordered_map (the baseline any stats tool pays).
// Trace: 8 slots of 2^20 keys each, Zipf s = 1.05 per slot (ranks as keys, unified-encoded),
// batches of 4096 samples with one key per bag. items_per_second: accesses per second, one core.
//
// Run: build/bench/micro/embscale_micro_trace_stats --benchmark_repetitions=3 --benchmark_display_aggregates_only=true
#include <benchmark/benchmark.h>

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "core/batch.hpp"
#include "core/rng.hpp"
#include "workloads/trace_stats.hpp"
#include "workloads/zipf_sampler.hpp"

namespace {

using embscale::Batch;
using embscale::Key;

constexpr std::int32_t kSlots = 8;
constexpr std::int64_t kSlotKeys = std::int64_t{1} << 20;
constexpr std::int64_t kAccesses = 10'000'000;
constexpr std::int64_t kSamplesPerBatch = 4096;

const std::vector<Batch>& trace() {
  static const std::vector<Batch> batches = [] {
    const embscale::workloads::ZipfSampler sampler(kSlotKeys, 1.05);
    embscale::RngCursor rng(embscale::CounterRng(2024, 0));
    std::vector<Batch> out;
    for (std::int64_t done = 0; done < kAccesses;) {
      Batch batch;
      batch.num_slots = kSlots;
      batch.num_samples = kSamplesPerBatch;
      for (std::int64_t b = 0; b < kSamplesPerBatch * kSlots; ++b, ++done) {
        batch.keys.push_back((b % kSlots) * kSlotKeys + sampler(rng) - 1);
        batch.offsets.push_back(static_cast<std::int64_t>(batch.keys.size()));
      }
      out.push_back(std::move(batch));
    }
    return out;
  }();
  return batches;
}

std::int64_t trace_accesses() {
  std::int64_t n = 0;
  for (const Batch& batch : trace()) n += static_cast<std::int64_t>(batch.keys.size());
  return n;
}

void collector(benchmark::State& state, bool reuse) {
  const auto& batches = trace();
  embscale::workloads::TraceStatsOptions options;
  options.reuse_distances = reuse;
  std::int64_t unique = 0;
  for (auto _ : state) {
    embscale::workloads::TraceStatsCollector stats(options);
    for (const Batch& batch : batches) stats.add(batch);
    const auto result = stats.finish();
    unique = result.total.unique_keys;
    // Self-check: every access counted once.
    if (result.total.accesses != trace_accesses()) state.SkipWithError("trace stats lost accesses");
    benchmark::DoNotOptimize(result.total.zipf.exponent);
  }
  state.counters["unique_keys"] = static_cast<double>(unique);
  state.SetItemsProcessed(state.iterations() * trace_accesses());
}

void unordered_map_count(benchmark::State& state) {
  const auto& batches = trace();
  for (auto _ : state) {
    std::unordered_map<Key, std::int64_t> counts;
    for (const Batch& batch : batches)
      for (const Key key : batch.keys) ++counts[key];
    benchmark::DoNotOptimize(counts.size());
  }
  state.SetItemsProcessed(state.iterations() * trace_accesses());
}

BENCHMARK_CAPTURE(collector, embscale_with_reuse, true)
    ->Name("trace_stats/embscale/reuse:1")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(collector, embscale_counts_only, false)
    ->Name("trace_stats/embscale/reuse:0")
    ->Unit(benchmark::kMillisecond);
BENCHMARK(unordered_map_count)->Name("trace_stats/unordered_map_count")->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
