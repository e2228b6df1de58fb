// The KV benchmark's Zipf calls (kv_bench.cpp): what the eviction-policy comparison's best
// admission filter costs. The eviction-policy comparison's stream (zipf_calls.hpp: N = 10^6 keys,
// Zipf s, calls of 4096 distinct keys) goes to two tables of 2^17 slots (buckets of 128, load
// factor 1, training, dim D, constant initial rows) that differ only in their admission: `none`
// (STEP scores, no filter) and the variant:
//   tiny_lfu   STEP scores, TinyLFU with the study's best sketch (kBestSketch below);
//   frequency  FREQUENCY scores with the same filter.
//
// Names: kv_zipf_<op>/<variant>/dim:<D>/s:<s>/threads:<T>, op find_or_insert or find. Set-up
// (untimed): both tables take the same warm-up calls. Each iteration draws the next call (timer
// paused) and runs it on both tables, the variant's time as the iteration's (manual time:
// items_per_second is the variant's keys per second), which table goes first alternating by
// iteration. find_or_insert continues the stream (the tables are never undone: the steady
// state, evictions and admission included); find reads the next call's keys and changes nothing.
// Counters: vs_none = the variant's keys/s over none's (both totals over the same calls: above
// 1, the filter is faster; the admission filter's target is >= 0.9), paired_vs_none = the median over
// iterations of none's time / the variant's time for the same call (robust to bursts of other
// load), and each table's hit rate per distinct key over the timed calls.
#pragma once

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kv/host_table.hpp"
#include "zipf_calls.hpp"

namespace embscale::kv_bench {

// The eviction-policy comparison's best sketch (bench/micro/README.md, "Eviction policies"): 8-bit
// counters (max 255), a bank halved every 160 x bucket_capacity sightings, 8 counters per slot per
// row, 4 rows, conservative update.
inline kv::AdmissionOptions best_tiny_lfu() {
  kv::AdmissionOptions a;
  a.kind = kv::AdmissionOptions::Kind::kTinyLfu;
  a.max_count = 255;
  a.aging_factor = 160.0;
  a.cells_per_slot = 8.0;
  a.depth = 4;
  a.conservative_update = true;
  return a;
}

enum class ZipfVariant { kTinyLfu, kFrequency };
enum class ZipfOp { kFindOrInsert, kFind };

inline const char* name_of(ZipfVariant v) { return v == ZipfVariant::kTinyLfu ? "tiny_lfu" : "frequency"; }
inline const char* name_of(ZipfOp op) { return op == ZipfOp::kFindOrInsert ? "find_or_insert" : "find"; }

struct ZipfScale {
  std::int64_t keys = 1'000'000;
  std::int64_t capacity = std::int64_t{1} << 17;
  std::size_t batch = 4096;
  int warmup_calls = 1024;  // ~4-20 M accesses: every bucket full, the filter past its fill
};

inline kv::TableOptions zipf_table_options(std::size_t dim, const ZipfScale& scale, kv::ScoreStrategy strategy,
                                           const kv::AdmissionOptions& admission) {
  kv::TableOptions o;
  o.dim = static_cast<std::int64_t>(dim);
  o.max_capacity = scale.capacity;
  o.init_capacity = scale.capacity;
  o.max_load_factor = 1.0;
  o.bucket_capacity = 128;
  o.score_strategy = strategy;
  o.initializer = {kv::InitializerMode::kConstant, 0.0, 1.0, 0.0, 0.0, 0.5, {}};
  o.admission = admission;
  return o;
}

// Both tables of one (variant, dim, s) and the stream, warmed up; shared by the variant's
// find_or_insert and find (registered one after the other).
struct ZipfFixture {
  ZipfVariant variant;
  std::size_t dim;
  double exponent;
  std::unique_ptr<kv::HostTable> none, filtered;
  bench::ZipfCalls calls;
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> counts;
  std::vector<float> rows;
  std::vector<std::uint8_t> founds;

  ZipfFixture(ZipfVariant v, std::size_t d, double s, const ZipfScale& scale)
      : variant(v), dim(d), exponent(s), none(std::make_unique<kv::HostTable>(zipf_table_options(
                                             d, scale, kv::ScoreStrategy::kStep, kv::AdmissionOptions{}))),
        filtered(std::make_unique<kv::HostTable>(zipf_table_options(
            d, scale, v == ZipfVariant::kTinyLfu ? kv::ScoreStrategy::kStep : kv::ScoreStrategy::kFrequency,
            best_tiny_lfu()))),
        calls(scale.keys, s, 2026, scale.batch), rows(scale.batch * d), founds(scale.batch) {
    for (int c = 0; c < scale.warmup_calls; ++c) {
      calls.next(keys, counts);
      none->find_or_insert(keys, rows, founds);
      filtered->find_or_insert(keys, rows, founds);
    }
  }
};

inline void run_zipf(benchmark::State& state, ZipfFixture& f, ZipfOp op, int threads) {
  f.none->set_execution_context({threads, 1024});
  f.filtered->set_execution_context({threads, 1024});
  double none_seconds = 0, filtered_seconds = 0;
  std::int64_t none_found = 0, filtered_found = 0, keys_total = 0;
  std::vector<double> paired;
  const auto timed = [&](kv::HostTable& table, std::int64_t& found) {
    const auto start = std::chrono::steady_clock::now();
    const kv::CallStats s = op == ZipfOp::kFindOrInsert ? table.find_or_insert(f.keys, f.rows, f.founds)
                                                        : table.find(f.keys, f.rows, f.founds);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    found += s.found;
    return seconds;
  };
  bool none_first = true;
  for (auto _ : state) {
    f.calls.next(f.keys, f.counts);  // untimed: manual time below
    double none_time, filtered_time;
    if (none_first) {
      none_time = timed(*f.none, none_found);
      filtered_time = timed(*f.filtered, filtered_found);
    } else {
      filtered_time = timed(*f.filtered, filtered_found);
      none_time = timed(*f.none, none_found);
    }
    none_first = !none_first;
    none_seconds += none_time;
    filtered_seconds += filtered_time;
    paired.push_back(none_time / filtered_time);
    keys_total += static_cast<std::int64_t>(f.keys.size());
    state.SetIterationTime(filtered_time);
  }
  std::nth_element(paired.begin(), paired.begin() + static_cast<long>(paired.size() / 2), paired.end());
  state.SetItemsProcessed(keys_total);
  state.counters["vs_none"] = none_seconds / filtered_seconds;
  state.counters["paired_vs_none"] = paired.empty() ? 0.0 : paired[paired.size() / 2];
  state.counters["none_keys_per_second"] = static_cast<double>(keys_total) / none_seconds;
  state.counters["hit_rate_none"] = static_cast<double>(none_found) / static_cast<double>(keys_total);
  state.counters["hit_rate_filtered"] = static_cast<double>(filtered_found) / static_cast<double>(keys_total);
}

}  // namespace embscale::kv_bench
