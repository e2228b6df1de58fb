// Routing of one rank's batch keys (de-duplicate, group by owner, inverse index): the
// KeyRouter against the routing it replaced and against a plain sort, in one binary and run.
//
//   route/legacy_sort_modulo_comparator/<batch>  the route_keys of commit a34960c, copied below:
//                                         std::sort by (key % ranks, key), unique, then a binary
//                                         search per occurrence with the same comparator
//   route/sort_unique_lower_bound/<batch>  std::sort by key, unique, lower_bound per occurrence,
//                                         then a counting sort of the distinct keys by owner
//   route/key_router/<batch>              KeyRouter::route, owner key % ranks, held across
//                                         iterations (the steady state: no allocation)
//   route/key_router_row_blocks/<batch>   the same with contiguous row blocks as owners (a lookup
//                                         in the sorted block starts, TorchRec's row-wise sharding)
//   route/key_router_no_dedup/<batch>     the same as key_router without de-duplication
//
// Batches (rank 0's share on 2 ranks, routed to 2 owners; keys unified-encoded over 8 slots of
// 10^5 keys, 4 keys per bag):
//   default   the embedded default config (bench/configs/default.json): 4096 samples, Zipf 1.05
//   uniform   the same with uniform keys (few repeats)
//   zipf1.3   the same with Zipf 1.3 (HugeCTR's "short" power law: most occurrences repeat)
//   default_x16  the default at 16x the batch (65536 samples, 2^20 keys on this rank)
//
// items_per_second: key occurrences routed per CPU second; per_key: CPU seconds per key occurrence
// (shown with an SI prefix: 3.1n is 3.1 ns). Every benchmark checks its result once (grouping, counts,
// inverse, distinctness) and reports an error instead of a time when a check fails. After the
// runs, a table of CPU ns per key per batch and each implementation's speed-up over the legacy
// one (medians of the repetitions).
//
// Run (README.md, "Key routing"):
//   build/bench/micro/embscale_micro_route --benchmark_min_time=0.5s --benchmark_repetitions=3
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "embedding/key_router.hpp"
#include "final_runs.hpp"
#include "workloads/synthetic.hpp"

namespace {

using embscale::Key;
using embscale::embedding::Deduplication;
using embscale::embedding::KeyRouter;
using embscale::embedding::ModuloSharding;
using embscale::embedding::RoutedKeys;
namespace config = embscale::config;

constexpr int kRanks = 2;

// --- The implementations ------------------------------------------------------------------------

// route_keys as of commit a34960c (the one this benchmark was written to replace), verbatim but
// for the error checks: a comparison sort whose comparator computes two modulos per comparison.
RoutedKeys legacy_sort_modulo_comparator(std::span<const Key> keys, const ModuloSharding& sharding) {
  const auto by_owner_then_key = [&](Key a, Key b) {
    const int oa = sharding.owner(a), ob = sharding.owner(b);
    return oa != ob ? oa < ob : a < b;
  };
  RoutedKeys out;
  out.send_keys.assign(keys.begin(), keys.end());
  std::sort(out.send_keys.begin(), out.send_keys.end(), by_owner_then_key);
  out.send_keys.erase(std::unique(out.send_keys.begin(), out.send_keys.end()), out.send_keys.end());
  out.send_counts.assign(static_cast<std::size_t>(sharding.ranks), 0);
  for (const Key k : out.send_keys) ++out.send_counts[static_cast<std::size_t>(sharding.owner(k))];
  out.inverse.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    const auto it = std::lower_bound(out.send_keys.begin(), out.send_keys.end(), keys[i], by_owner_then_key);
    out.inverse[i] = static_cast<std::uint32_t>(it - out.send_keys.begin());
  }
  return out;
}

// What one would write first with the standard library: sort by key, unique, a binary search per
// occurrence, then a stable counting sort of the (few) distinct keys by owner. Scratch held by
// the caller as KeyRouter's is, so both allocate nothing in the steady state.
struct SortUniqueScratch {
  std::vector<Key> sorted;
  std::vector<std::uint32_t> position;
  std::vector<std::size_t> cursor;
};

void sort_unique_lower_bound(std::span<const Key> keys, const ModuloSharding& sharding, SortUniqueScratch& s,
                             RoutedKeys& out) {
  s.sorted.assign(keys.begin(), keys.end());
  std::sort(s.sorted.begin(), s.sorted.end());
  s.sorted.erase(std::unique(s.sorted.begin(), s.sorted.end()), s.sorted.end());
  const auto R = static_cast<std::size_t>(sharding.ranks);
  out.send_counts.assign(R, 0);
  for (const Key k : s.sorted) ++out.send_counts[static_cast<std::size_t>(sharding.owner(k))];
  s.cursor.assign(R, 0);
  for (std::size_t r = 1; r < R; ++r) s.cursor[r] = s.cursor[r - 1] + out.send_counts[r - 1];
  out.send_keys.resize(s.sorted.size());
  s.position.resize(s.sorted.size());
  for (std::size_t j = 0; j < s.sorted.size(); ++j) {
    const std::size_t p = s.cursor[static_cast<std::size_t>(sharding.owner(s.sorted[j]))]++;
    out.send_keys[p] = s.sorted[j];
    s.position[j] = static_cast<std::uint32_t>(p);
  }
  out.inverse.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    out.inverse[i] = s.position[static_cast<std::size_t>(std::lower_bound(s.sorted.begin(), s.sorted.end(), keys[i]) -
                                                         s.sorted.begin())];
}

// TorchRec's row-wise sharding: rank r owns the contiguous block [starts[r], starts[r + 1]).
struct RowBlockOwner {
  std::vector<Key> starts;  // starts[0] == 0, ascending, one per rank
  int operator()(Key key) const noexcept {
    return static_cast<int>(std::upper_bound(starts.begin() + 1, starts.end(), key) - starts.begin() - 1);
  }
};

// --- Batches and the check ----------------------------------------------------------------------

struct NamedBatch {
  std::string name;
  std::vector<Key> keys;
  std::int64_t vocabulary = 0;
};

NamedBatch make_batch(const std::string& name, config::KeyDistribution distribution, double zipf_alpha,
                      std::int64_t batch_scale) {
  const config::Config defaults = config::default_config();
  config::DataLayer data = defaults.data;
  for (auto& slot : data.synthetic.slots) {
    slot.keys.distribution = distribution;
    slot.keys.zipf_alpha = zipf_alpha;
  }
  const embscale::workloads::SyntheticGenerator generator(data, defaults.solver.seed,
                                                          defaults.solver.batchsize * batch_scale);
  return {name, generator.generate(0, 0, kRanks).keys, generator.total_vocabulary()};
}

const std::vector<NamedBatch>& batches() {
  static const std::vector<NamedBatch> all = [] {
    const double default_alpha = config::default_config().data.synthetic.slots.at(0).keys.zipf_alpha;
    using config::KeyDistribution;
    return std::vector<NamedBatch>{make_batch("default", KeyDistribution::kZipf, default_alpha, 1),
                                   make_batch("uniform", KeyDistribution::kUniform, default_alpha, 1),
                                   make_batch("zipf1.3", KeyDistribution::kZipf, 1.3, 1),
                                   make_batch("default_x16", KeyDistribution::kZipf, default_alpha, 16)};
  }();
  return all;
}

// What is wrong with `routed` as the routing of `keys` by `owner`, or an empty string.
template <class Owner>
std::string routing_error(std::span<const Key> keys, const Owner& owner, const RoutedKeys& routed, bool dedup) {
  if (routed.send_counts.size() != static_cast<std::size_t>(kRanks)) return "send_counts has the wrong size";
  if (routed.inverse.size() != keys.size()) return "inverse has the wrong size";
  std::size_t pos = 0;
  for (int r = 0; r < kRanks; ++r)
    for (std::size_t c = 0; c < routed.send_counts[static_cast<std::size_t>(r)]; ++c, ++pos)
      if (pos >= routed.send_keys.size() || owner(routed.send_keys[pos]) != r)
        return "a key sits in another owner's group";
  if (pos != routed.send_keys.size()) return "send_counts do not add up to send_keys";
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (routed.inverse[i] >= routed.send_keys.size() || routed.send_keys[routed.inverse[i]] != keys[i])
      return "inverse does not map back to the input";
  std::vector<Key> sorted_send(routed.send_keys), distinct(keys.begin(), keys.end());
  std::sort(sorted_send.begin(), sorted_send.end());
  std::sort(distinct.begin(), distinct.end());
  if (dedup) distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  if (sorted_send != distinct) return dedup ? "send_keys are not the distinct keys" : "send_keys are not the keys";
  return {};
}

// CPU time of this process, as Google Benchmark's CPU column and rates count it: on a shared
// machine the wall clock also counts the time other processes held the core.
double cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// (iterations, CPU seconds per key) of every run of a benchmark, by implementation and batch.
std::map<std::string, std::map<std::string, std::vector<std::pair<benchmark::IterationCount, double>>>> g_runs;

// Times `route(out)` over the batch, checks the last result and reports per-key rates.
template <class Route, class Owner>
void run(benchmark::State& state, const std::string& implementation, const NamedBatch& batch, const Owner& owner,
         bool dedup, Route route) {
  RoutedKeys out;
  route(out);  // warm: the scratch reaches its steady size
  const double start = cpu_seconds();
  for (auto _ : state) {
    route(out);
    benchmark::DoNotOptimize(out.inverse.data());
    benchmark::ClobberMemory();
  }
  const double seconds = cpu_seconds() - start;
  if (const std::string error = routing_error(batch.keys, owner, out, dedup); !error.empty()) {
    state.SkipWithError(error.c_str());
    return;
  }
  const auto n = static_cast<double>(batch.keys.size());
  state.SetItemsProcessed(state.iterations() * static_cast<std::int64_t>(batch.keys.size()));
  state.counters["per_key"] =
      benchmark::Counter(n, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["keys"] = n;
  state.counters["sent"] = static_cast<double>(out.send_keys.size());
  g_runs[implementation][batch.name].emplace_back(state.iterations(),
                                                  seconds / static_cast<double>(state.iterations()) / n);
}

void register_all() {
  const ModuloSharding modulo{kRanks};
  const auto modulo_owner = [modulo](Key k) { return modulo.owner(k); };
  for (const NamedBatch& batch : batches()) {
    const auto add = [&](const std::string& implementation, auto body) {
      benchmark::RegisterBenchmark(("route/" + implementation + "/" + batch.name).c_str(), body)
          ->Unit(benchmark::kMicrosecond);
    };
    add("legacy_sort_modulo_comparator", [&batch, modulo, modulo_owner](benchmark::State& state) {
      run(state, "legacy_sort_modulo_comparator", batch, modulo_owner, true,
          [&](RoutedKeys& out) { out = legacy_sort_modulo_comparator(batch.keys, modulo); });
    });
    add("sort_unique_lower_bound", [&batch, modulo, modulo_owner](benchmark::State& state) {
      SortUniqueScratch scratch;
      run(state, "sort_unique_lower_bound", batch, modulo_owner, true,
          [&](RoutedKeys& out) { sort_unique_lower_bound(batch.keys, modulo, scratch, out); });
    });
    add("key_router", [&batch, modulo, modulo_owner](benchmark::State& state) {
      KeyRouter router;
      run(state, "key_router", batch, modulo_owner, true,
          [&](RoutedKeys& out) { router.route(batch.keys, modulo, out); });
    });
    add("key_router_row_blocks", [&batch](benchmark::State& state) {
      const RowBlockOwner blocks{{0, batch.vocabulary / kRanks}};
      KeyRouter router;
      run(state, "key_router_row_blocks", batch, blocks, true,
          [&](RoutedKeys& out) { router.route(batch.keys, kRanks, blocks, out); });
    });
    add("key_router_no_dedup", [&batch, modulo, modulo_owner](benchmark::State& state) {
      KeyRouter router;
      run(state, "key_router_no_dedup", batch, modulo_owner, false,
          [&](RoutedKeys& out) { router.route(batch.keys, modulo, out, Deduplication::kOff); });
    });
  }
}

double median_per_key(const std::vector<std::pair<benchmark::IterationCount, double>>& runs) {
  const std::vector<double> sorted = embscale::bench::final_runs_sorted(runs);
  return sorted[sorted.size() / 2];
}

void print_summary() {
  const std::string legacy = "legacy_sort_modulo_comparator";
  if (!g_runs.count(legacy)) return;
  std::printf("\nCPU ns per key (median), speed-up over %s in brackets\n", legacy.c_str());
  for (const NamedBatch& batch : batches()) {
    if (!g_runs[legacy].count(batch.name)) continue;
    const double base = median_per_key(g_runs[legacy][batch.name]);
    std::printf("%-12s %9zu keys:", batch.name.c_str(), batch.keys.size());
    for (const auto& [implementation, by_batch] : g_runs) {
      const auto it = by_batch.find(batch.name);
      if (it == by_batch.end()) continue;
      const double per_key = median_per_key(it->second);
      std::printf("  %s %.2f (%.1fx)", implementation.c_str(), per_key * 1e9, base / per_key);
    }
    std::printf("\n");
  }
}

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 2;
  register_all();
  benchmark::RunSpecifiedBenchmarks();
  print_summary();
  benchmark::Shutdown();
  return 0;
}
