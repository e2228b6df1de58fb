#include "kv/table_options.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <string>

#include "core/error.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv {

std::string to_string(ValueType t) {
  switch (t) {
    case ValueType::kFloat32: return "float32";
    case ValueType::kFloat16: return "float16";
    case ValueType::kBFloat16: return "bfloat16";
  }
  return "?";
}

std::string to_string(ScoreStrategy s) { return std::string(score_rules(s).name); }

void check_options(const TableOptions& o) {
  const auto fail = [](const std::string& field, const std::string& expected, const std::string& got) {
    throw InputError("table options: " + field + ": expected " + expected + ", got " + got);
  };
  if (o.dim < 1) fail("dim", "an integer >= 1", std::to_string(o.dim));
  if (o.optimizer_state_width < 0)
    fail("optimizer_state_width", "an integer >= 0", std::to_string(o.optimizer_state_width));
  const auto b = o.bucket_capacity;
  if (b < 16 || b > 1024 || (b & (b - 1)) != 0)
    fail("bucket_capacity", "a power of two in [16, 1024]", std::to_string(b));
  if (o.max_capacity < b)
    fail("max_capacity", "at least bucket_capacity (" + std::to_string(b) + ")", std::to_string(o.max_capacity));
  if (o.init_capacity < 0 || o.init_capacity > o.max_capacity)
    fail("init_capacity", "0 (= max_capacity) or in [1, max_capacity]", std::to_string(o.init_capacity));
  if (!(o.max_load_factor > 0.0 && o.max_load_factor <= 1.0))
    fail("max_load_factor", "a number in (0, 1]", std::to_string(o.max_load_factor));
  if (o.num_embeddings < 0) fail("num_embeddings", "an integer >= 0", std::to_string(o.num_embeddings));
  if (o.max_hbm_for_rows < 0)
    fail("max_hbm_for_rows", "0 (every row in device memory) or a number of bytes", std::to_string(o.max_hbm_for_rows));
  check_admission_options(o.admission);
  if (needs_admission_estimate(score_rules(o.score_strategy)) && o.admission.kind == AdmissionOptions::Kind::kNone)
    fail("score_strategy",
         "an admission filter (admission.kind k_count or tiny_lfu) with " + to_string(o.score_strategy) +
             ", whose new keys score the filter's estimate",
         "admission.kind none");
}

std::int64_t initial_buckets(const TableOptions& o) {
  const std::int64_t initial = o.init_capacity ? o.init_capacity : o.max_capacity;
  return static_cast<std::int64_t>(std::bit_ceil(
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, (initial + o.bucket_capacity - 1) / o.bucket_capacity))));
}

std::int64_t buckets_for_incoming(const TableOptions& o, std::int64_t buckets, std::int64_t size,
                                  std::int64_t incoming) {
  const auto fits = [&](std::int64_t b) {
    return static_cast<double>(size + incoming) <= o.max_load_factor * static_cast<double>(b * o.bucket_capacity);
  };
  while (!fits(buckets) && buckets * 2 * o.bucket_capacity <= o.max_capacity) buckets *= 2;
  return buckets;
}

std::int64_t buckets_for_capacity(const TableOptions& o, std::int64_t buckets, std::int64_t capacity) {
  while (buckets * o.bucket_capacity < capacity && buckets * 2 * o.bucket_capacity <= o.max_capacity) buckets *= 2;
  return buckets;
}

std::uint64_t table_clock_ns(const TableOptions& o) {
  if (o.clock) return o.clock();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

void check_refusals(const TableOptions& o, std::int64_t refused, std::size_t keys) {
  // kWarning and kIgnore: the count is the call's (CallStats::refused); a run reports a WARNING
  // table's refusals once, after its last step (run/driver_choice.hpp), never a line per call.
  if (refused > 0 && o.safe_check == SafeCheck::kError)
    throw Error("find_or_insert could not insert " + std::to_string(refused) + " of " + std::to_string(keys) +
                " keys (full buckets of higher scores; safe_check_mode ERROR): "
                "raise the capacity or the bucket capacity");
}

}  // namespace embscale::kv
