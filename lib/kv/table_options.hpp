// How a dynamic table is configured (dynamicemb's DynamicEmbTableOptions, on the HierarchicalKV
// design) and the enums of its behaviour.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "kv/admission.hpp"
#include "kv/value_types.hpp"

namespace embscale::kv {

// Who sets a key's uint64 score, and how. A smaller score is evicted first. Each strategy's rules
// in full, and its name and dump file code, are its row of kv/score_rules.hpp (a new strategy
// needs one there).
enum class ScoreStrategy {
  kTimestamp,   // a monotonic clock (ns) read once per call (HierarchicalKV's LRU)
  kStep,        // a counter that advances once per score-setting call
  kCustomized,  // the caller's scores, one per key
  kLfu,         // the number of occurrences: +1 per occurrence of the key in score-setting calls
  kEpochLru,    // epoch << 32 | low 32 bits of the clock in 2^20 ns units (HierarchicalKV's ~1 ms)
  kEpochLfu,    // epoch << 32 | occurrences within the epoch (saturating at 2^32 - 1)
  kFrequency,   // an aged frequency: a new key starts at the admission filter's estimate, +1 per
                // occurrence, the bucket's scores halved whenever its bank of the filter ages
};

// What happens to keys find_or_insert cannot insert (their bucket is full of higher scores).
enum class SafeCheck {
  kError,    // the call fails with the count (after applying the rest of the batch)
  kWarning,  // the count is reported (CallStats::refused; a run prints the total once); rows read as zeros
  kIgnore,   // rows read as zeros, counted in CallStats::refused only
};

// The key type a table was made for (its dump files record it). Keys are stored as uint64; an
// int64 key is its two's-complement bit pattern.
enum class KeyType { kInt64, kUint64 };

enum class InitializerMode { kUniform, kNormal, kTruncatedNormal, kConstant, kDebug };

// A key's initial row is a pure function of (table seed, key): the same on any rank and with any
// number of threads. UNIFORM draws from [lower, upper); NORMAL from N(mean, std_dev);
// TRUNCATED_NORMAL from N(mean, std_dev) redrawn outside [lower, upper]; CONSTANT is `value`;
// DEBUG is key + d / 1000 for value d (readable in tests). When lower and upper are both 0 for
// UNIFORM and TRUNCATED_NORMAL, they default to -+1/sqrt(num_embeddings), as in dynamicemb.
struct InitializerArgs {
  InitializerMode mode = InitializerMode::kUniform;
  double mean = 0.0;
  double std_dev = 1.0;
  double lower = 0.0;
  double upper = 0.0;
  double value = 0.0;
  // The optimizer state of a new row (training rows only; SparseOptimizer::init_state): value i
  // of the state is initial_state[i], zero past its end.
  std::vector<float> initial_state{};
};

struct TableOptions {
  std::int64_t dim = 0;                    // embedding values per key
  std::int64_t optimizer_state_width = 0;  // values stored after the embedding (training only)
  ValueType value_type = ValueType::kFloat32;
  std::int64_t init_capacity = 0;      // 0: max_capacity. Rounded up to a power-of-two
                                       // number of buckets
  std::int64_t max_capacity = 0;       // slots the table may grow to
  double max_load_factor = 0.5;        // past it the table doubles, up to max_capacity
  std::int64_t bucket_capacity = 128;  // slots per bucket, a power of two in [16, 1024]
  ScoreStrategy score_strategy = ScoreStrategy::kTimestamp;
  SafeCheck safe_check = SafeCheck::kIgnore;
  bool training = true;         // false: no optimizer state; missing keys read the
                                // eval initializer and are not inserted
  InitializerArgs initializer;  // training
  InitializerArgs eval_initializer{InitializerMode::kConstant, 0.0, 1.0, 0.0, 0.0, 0.0, {}};
  std::int64_t num_embeddings = 0;  // for the default uniform bounds; 0: max_capacity
  std::uint64_t seed = 0;
  std::function<std::uint64_t()> clock;  // ns, monotonic; empty: std::chrono::steady_clock
  std::string rows_directory;            // empty: rows in memory; else in an unnamed file
                                         // there (kv/mapped_array.hpp): a slow tier
  AdmissionOptions admission;            // which newcomers may enter (kv/admission.hpp);
                                         // default: all
  // The GPU table only (kv/device_table.hpp; HierarchicalKV's max_hbm_for_vectors): bytes of rows
  // kept in device memory, whole buckets from the first; the other buckets' rows live in pinned
  // host memory that the GPU reads over the bus (hybrid mode). 0: every row in device memory.
  std::int64_t max_hbm_for_rows = 0;
};

// Throws InputError naming the option when the options cannot make a table.
void check_options(const TableOptions& options);

// The growth rule of both tables (kv/host_table.hpp: the CPU table, kv/portable_table.hpp: the
// GPU table), in buckets of options.bucket_capacity slots, always a power of two:
// the buckets a new table starts with (init_capacity, or max_capacity, rounded up);
std::int64_t initial_buckets(const TableOptions& options);
// before a call that may insert `incoming` keys into a table of `size` keys: doubled while
// size + incoming exceeds max_load_factor x capacity, up to max_capacity;
std::int64_t buckets_for_incoming(const TableOptions& options, std::int64_t buckets, std::int64_t size,
                                  std::int64_t incoming);
// for reserve(capacity): doubled until they hold `capacity` slots, up to max_capacity.
std::int64_t buckets_for_capacity(const TableOptions& options, std::int64_t buckets, std::int64_t capacity);

// Both tables' clock: options.clock when set, else std::chrono::steady_clock, in ns.
std::uint64_t table_clock_ns(const TableOptions& options);

// find_or_insert's refusals under SafeCheck::kError: throws Error saying how many of `keys` keys
// could not be inserted and what to raise; nothing under the other modes.
void check_refusals(const TableOptions& options, std::int64_t refused, std::size_t keys);

std::string to_string(ScoreStrategy s);

}  // namespace embscale::kv
