#include "eviction_policy_run.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <span>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/math.hpp"
#include "kv/host_table.hpp"
#include "zipf_calls.hpp"

namespace embscale::bench {
namespace {

double number_of(const std::string& spec, const std::string& field, const std::string& text) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || text.empty())
    throw InputError("admission setting \"" + spec + "\": " + field + ": expected a number, got \"" + text + "\"");
  return value;
}

int integer_of(const std::string& spec, const std::string& field, const std::string& text) {
  const double value = number_of(spec, field, text);
  if (value != std::floor(value) || std::abs(value) > 1e9)
    throw InputError("admission setting \"" + spec + "\": " + field + ": expected an integer, got \"" + text + "\"");
  return static_cast<int>(value);
}

}  // namespace

kv::TableOptions study_table_options(const StudySetup& setup, kv::ScoreStrategy strategy,
                                     const kv::AdmissionOptions& admission) {
  kv::TableOptions o;
  o.dim = 1;
  o.max_capacity = setup.capacity;
  o.init_capacity = setup.capacity;
  o.max_load_factor = 1.0;
  o.bucket_capacity = setup.bucket_capacity;
  o.score_strategy = strategy;
  o.initializer.mode = kv::InitializerMode::kConstant;
  o.admission = admission;
  // A deterministic clock: one tick per read (a call reads it once), so TIMESTAMP is STEP.
  o.clock = [tick = std::uint64_t{0}]() mutable { return ++tick; };
  return o;
}

AdmissionSetting parse_admission_setting(const std::string& spec) {
  AdmissionSetting setting{spec, {}};
  kv::AdmissionOptions& o = setting.options;
  const std::size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (kind == "none") o.kind = kv::AdmissionOptions::Kind::kNone;
  else if (kind == "k_count") o.kind = kv::AdmissionOptions::Kind::kKCount;
  else if (kind == "tiny_lfu") o.kind = kv::AdmissionOptions::Kind::kTinyLfu;
  else
    throw InputError("admission setting \"" + spec + "\": expected none, k_count or tiny_lfu before any ':', got \"" +
                     kind + "\"");
  std::string rest = colon == std::string::npos ? "" : spec.substr(colon + 1);
  while (!rest.empty()) {
    const std::size_t comma = rest.find(',');
    const std::string item = rest.substr(0, comma);
    rest = comma == std::string::npos ? "" : rest.substr(comma + 1);
    const std::size_t eq = item.find('=');
    if (eq == std::string::npos)
      throw InputError("admission setting \"" + spec + "\": expected field=value, got \"" + item + "\"");
    const std::string field = item.substr(0, eq), value = item.substr(eq + 1);
    if (field == "threshold") o.threshold_k = integer_of(spec, field, value);
    else if (field == "max_count") o.max_count = integer_of(spec, field, value);
    else if (field == "depth") o.depth = integer_of(spec, field, value);
    else if (field == "cells_per_slot") o.cells_per_slot = number_of(spec, field, value);
    else if (field == "aging_factor") o.aging_factor = number_of(spec, field, value);
    else if (field == "conservative_update") {
      if (value != "true" && value != "false")
        throw InputError("admission setting \"" + spec + "\": conservative_update: expected true or false, got \"" +
                         value + "\"");
      o.conservative_update = value == "true";
    } else
      throw InputError(
          "admission setting \"" + spec + "\": unknown field \"" + field +
          "\" (expected threshold, max_count, depth, cells_per_slot, aging_factor or conservative_update)");
  }
  try {
    kv::check_admission_options(o);
  } catch (const InputError& e) {
    throw InputError("admission setting \"" + spec + "\": " + e.what());
  }
  return setting;
}

StudyResult run_study(const StudySetup& setup, double exponent, kv::ScoreStrategy strategy,
                      const kv::AdmissionOptions& admission) {
  const auto start = std::chrono::steady_clock::now();
  kv::HostTable table(study_table_options(setup, strategy, admission));
  table.set_execution_context({setup.threads, 4096});
  ZipfCalls calls(setup.keys, exponent, setup.seed, setup.batch);
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> counts;
  std::vector<float> rows(setup.batch);
  std::vector<std::uint8_t> founds(setup.batch);

  std::uint64_t drawn = 0;
  while (drawn < setup.warmup) {
    drawn += calls.next(keys, counts);
    table.find_or_insert(keys, rows, founds);
  }
  if (setup.drift) calls.remap(1);

  StudyResult r;
  std::uint64_t hits = 0, distinct = 0, distinct_hits = 0;
  std::uint64_t interval_hits = 0, interval_accesses = 0;
  int interval = 0;
  kv::CallStats total;
  while (r.accesses < setup.measure) {
    const std::uint64_t draws = calls.next(keys, counts);
    total += table.find_or_insert(keys, rows, founds);
    std::uint64_t call_hits = 0;
    for (std::size_t i = 0; i < keys.size(); ++i)
      if (founds[i]) {
        call_hits += counts[i];
        ++distinct_hits;
      }
    hits += call_hits;
    distinct += keys.size();
    r.accesses += draws;
    ++r.calls;
    interval_hits += call_hits;
    interval_accesses += draws;
    // Interval k ends at the first call boundary at or past (k + 1) / intervals of the window.
    const auto boundary =
        setup.measure * static_cast<std::uint64_t>(interval + 1) / static_cast<std::uint64_t>(setup.intervals);
    if (r.accesses >= boundary && interval < setup.intervals) {
      r.interval_hit_rates.push_back(static_cast<double>(interval_hits) / static_cast<double>(interval_accesses));
      r.interval_ends.push_back(r.accesses);
      interval_hits = interval_accesses = 0;
      ++interval;
    }
  }
  r.hit_rate = static_cast<double>(hits) / static_cast<double>(r.accesses);
  r.distinct_hit_rate = static_cast<double>(distinct_hits) / static_cast<double>(distinct);
  r.not_admitted = static_cast<double>(total.not_admitted) / static_cast<double>(distinct);
  r.refused = static_cast<double>(total.refused) / static_cast<double>(distinct);
  r.evicted = static_cast<double>(total.evicted) / static_cast<double>(distinct);
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return r;
}

double top_capacity_bound(std::int64_t capacity, std::int64_t keys, double exponent) {
  return generalized_harmonic(std::min(capacity, keys), exponent) / generalized_harmonic(keys, exponent);
}

double bucketed_bound(const StudySetup& setup, double exponent) {
  // The table's bucket count for max_capacity slots (HostTable: a power of two of buckets).
  std::int64_t buckets = 1;
  while (buckets * setup.bucket_capacity < setup.capacity) buckets *= 2;
  const ZipfCalls calls(setup.keys, exponent, setup.seed, 1);
  std::vector<std::int64_t> held(static_cast<std::size_t>(buckets), 0);
  double kept = 0;
  // Ranks in order of frequency: each bucket keeps the first bucket_capacity of its own.
  for (std::int64_t rank = 1; rank <= setup.keys; ++rank) {
    const auto bucket = static_cast<std::size_t>(mix64(calls.key_of(rank)) & static_cast<std::uint64_t>(buckets - 1));
    if (held[bucket] == setup.bucket_capacity) continue;
    ++held[bucket];
    kept += std::pow(static_cast<double>(rank), -exponent);
  }
  return kept / generalized_harmonic(setup.keys, exponent);
}

}  // namespace embscale::bench
