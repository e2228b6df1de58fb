// One run of the eviction-policy comparison (eviction_policies.cpp): a kv::HostTable fed the calls of an
// independent Zipf stream (zipf_calls.hpp) under one score strategy and admission filter, and the
// bounds its hit rate is compared with.
//
// What is measured: calls of `batch` distinct keys go to find_or_insert (training, dim 1), as
// the engine's step does. A warm-up of `warmup` draws (accesses) is run first, then the measured
// window of `measure` draws. An access is a hit when its key was in the table when its call
// began (the call's `founds`, weighted by the key's draws in the call): so a key drawn twice in
// the call that inserts it counts two misses, as in the engine, where a step reads each of its
// distinct keys once. The window is also cut into `intervals` equal parts (by draws, at call
// boundaries) for the curve over time.
//
// Drift: with `drift`, the key mapping changes when the measured window begins (every rank gets a
// fresh key; ZipfCalls::remap): the warm-up's content is stale, and the interval curve shows the
// recovery.
//
// The table's clock is a counter advanced by one per read (deterministic runs): TIMESTAMP then
// orders exactly as STEP, and EPOCH_LRU (epoch 0) as well. CUSTOMIZED gets no per-key scores
// (every key scores the set_score value 0), as in an engine that never calls set_score.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kv/admission.hpp"
#include "kv/table_options.hpp"

namespace embscale::bench {

struct StudySetup {
  std::int64_t keys = 1'000'000;    // N
  std::int64_t capacity = 1 << 17;  // C: the table's max_capacity (and initial capacity)
  std::int64_t bucket_capacity = 128;
  std::size_t batch = 4096;            // distinct keys per call
  std::uint64_t warmup = 40'000'000;   // draws before the measured window
  std::uint64_t measure = 40'000'000;  // draws in it
  int intervals = 10;
  std::uint64_t seed = 2026;
  int threads = 1;  // ExecutionContext::threads (the result does not depend on it)
  bool drift = false;
};

// An admission setting as the study names it: its spec string and the options it stands for.
struct AdmissionSetting {
  std::string spec;
  kv::AdmissionOptions options;
};

// "kind[:field=value,...]", kind none | k_count | tiny_lfu, fields as storage.admission's (threshold,
// max_count, depth, cells_per_slot, aging_factor, conservative_update). Throws InputError naming
// the spec and field.
AdmissionSetting parse_admission_setting(const std::string& spec);

struct StudyResult {
  double hit_rate = 0;           // per access over the measured window
  double distinct_hit_rate = 0;  // per distinct key of a call over the window
  std::uint64_t accesses = 0;    // draws in the window (>= measure: whole calls)
  std::uint64_t calls = 0;       // in the window
  double not_admitted = 0;       // per distinct key of the window's calls
  double refused = 0;
  double evicted = 0;
  std::vector<double> interval_hit_rates;
  std::vector<std::uint64_t> interval_ends;  // draws since the window began, at each interval's end
  double seconds = 0;                        // wall time of the whole run (warm-up included)
};

// The study's table: dim 1, training, max_capacity = initial capacity = setup.capacity, load
// factor 1, constant initial rows, the counter clock.
kv::TableOptions study_table_options(const StudySetup& setup, kv::ScoreStrategy strategy,
                                     const kv::AdmissionOptions& admission);

StudyResult run_study(const StudySetup& setup, double exponent, kv::ScoreStrategy strategy,
                      const kv::AdmissionOptions& admission);

// H(C, s) / H(N, s): the hit rate of keeping the C most frequent keys (perfect LFU's limit).
double top_capacity_bound(std::int64_t capacity, std::int64_t keys, double exponent);
// The same under bucket-local placement: each bucket (of capacity / bucket_capacity, by the
// table's hash of the study's keys) keeping its bucket_capacity most frequent keys. Exact for the
// study's key mapping (seed, mapping 0).
double bucketed_bound(const StudySetup& setup, double exponent);

}  // namespace embscale::bench
