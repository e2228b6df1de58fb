// HostTable: a dynamic key-value table with bucketed, score-based eviction, in host memory
// (the HierarchicalKV / dynamicemb design, on a CPU).
//
// Layout. The table is `buckets` buckets (a power of two) of `bucket_capacity` slots. A key maps
// to exactly one bucket: h = mix64(key), bucket = h & (buckets - 1), digest = h >> 56. Per slot
// the bucket holds a one-byte digest, the key and its uint64 score, each in its own array, so a
// probe reads one cache line of digests for 64 slots; rows (dim embedding values, then the
// optimizer state) live in a separate array, slot-aligned, in the table's value type. The
// occupied slots of a bucket are always its first `size` slots (erase moves the last one into
// the hole), so a probe compares `size` digests, 64 per instruction sequence (AVX-512BW, AVX2
// or portable, chosen at run time: kv/digest_match.hpp), and a free slot is found in O(1).
//
// False positives. A probe compares the key of every slot whose digest matches: with 8-bit
// digests of a mixed hash, a lookup in a bucket of n occupied slots makes n/256 key compares
// on average beyond the right one (0.5 in a full 128-slot bucket).
//
// Semantics (also the reference model's, tests/kv/reference_table.hpp):
// * A batch call behaves exactly as if its keys were applied one by one in input order.
// * Scores: every strategy's rules are in kv/score_rules.hpp. Score-setting calls:
//   insert_or_assign, insert_and_evict, find_or_insert, accum_or_assign, assign_scores,
//   find_and_update. find and contains never change a score; assign changes values only. STEP
//   advances once per score-setting call.
// * Placement: a new key takes a free slot of its bucket; in a full bucket it replaces the slot
//   of lowest score (ties: the smallest key) when its own score is not lower, else it is refused
//   (CallStats::refused).
// * Admission filter (TableOptions::admission, kv/admission.hpp): every newcomer of an inserting
//   call (not restore) is first recorded as a sighting, then given its score (under FREQUENCY
//   the filter's estimate of it) and its placement (free slot, evict with the victim's key,
//   refused), and the filter decides; a newcomer with a place that the filter turns down is not
//   inserted and counted in CallStats::not_admitted (find_or_insert returns the initializer's
//   row, unrounded, with found 0; upserts drop the value). A hit that touches a key's score
//   (insert_or_assign, insert_and_evict, find_or_insert in training, accumulating
//   accum_or_assign, assign_scores, find_and_update) records a sighting of that key after the
//   new score is set. A sighting that ages the bucket's bank halves the bucket's scores under
//   FREQUENCY (ScoreAging::kHalveWithBank). The filter keeps one bank of counters per bucket, so
//   it follows the bucket partition below; on growth each new bucket's bank is a copy of its
//   parent's; clear() zeroes it. restore bypasses it.
// * Growth: before a call that may insert n keys, while size + n > max_load_factor * capacity
//   and capacity < max_capacity, the table doubles (each bucket splits in two; nothing is lost).
// * Keys 2^64-3 .. 2^64-1 (as int64: -3 .. -1) are reserved and rejected with InputError.
//
// Threads: a call runs its keys on ExecutionContext::threads threads (OpenMP), partitioned by
// bucket group with input order kept inside a group (kv/bucket_partition.hpp), which gives the
// one-key-at-a-time result exactly. Calls from several threads at once follow HierarchicalKV's
// groups (kv/group_mutex.hpp): finds and exports run together, assigns run together (a
// per-bucket spin lock orders their writes), inserts, erases, rehash and clear run alone.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "kv/admission.hpp"
#include "kv/group_mutex.hpp"
#include "kv/kv_table.hpp"
#include "kv/mapped_array.hpp"
#include "kv/table_options.hpp"
#include "kv/victim_search.hpp"

namespace embscale::kv {

inline constexpr std::uint64_t kFirstReservedKey = 0xFFFFFFFFFFFFFFFDULL;

// Evicted entries of insert_and_evict, in eviction order.
using Evicted = Entries<std::uint64_t>;

// Throws InputError naming the first reserved key of a call and its position.
void check_table_keys(std::span<const std::uint64_t> keys);

class HostTable {
 public:
  explicit HostTable(TableOptions options);

  const TableOptions& options() const noexcept { return options_; }
  // Values per stored row: dim, plus the optimizer state in training mode.
  std::int64_t row_width() const noexcept { return row_width_; }
  // Each a read call: consistent with the calls before and after it.
  std::int64_t size() const;
  std::int64_t capacity() const;
  double load_factor() const;
  std::int64_t buckets() const;

  // Grows to at least `capacity` slots (doubling; at most max_capacity). Never shrinks.
  void reserve(std::int64_t capacity);
  void clear();

  // values: keys.size() x row_width, written for found keys (others untouched); founds: one
  // per key (1 found); scores (optional): the found keys' scores.
  CallStats find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                 std::span<std::uint64_t> scores = {}) const;
  // find that also refreshes the found keys' scores (LRU/LFU lookups).
  CallStats find_and_update(std::span<const std::uint64_t> keys, std::span<float> values,
                            std::span<std::uint8_t> founds);
  void contains(std::span<const std::uint64_t> keys, std::span<std::uint8_t> founds) const;

  // scores: one per key under CUSTOMIZED (empty: the set_score value), ignored otherwise.
  CallStats insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores = {});
  CallStats insert_and_evict(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores, Evicted& evicted);
  // Missing keys are inserted with the initializer's row (training) and returned; in eval mode
  // they read the eval initializer and are not inserted. Refused keys read zeros (SafeCheck);
  // keys the admission filter keeps out read the initializer's row, found 0.
  // Entries evicted to make room are appended to `evicted` when given (a tier's demotions).
  CallStats find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                           std::span<std::uint8_t> founds = {}, std::span<const std::uint64_t> scores = {},
                           Evicted* evicted = nullptr);
  // Existing keys only; values change, scores do not.
  CallStats assign(std::span<const std::uint64_t> keys, std::span<const float> values);
  // Existing keys only: CUSTOMIZED takes `scores`; other strategies refresh as on a hit.
  CallStats assign_scores(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> scores);
  // Per key: accumulate[i] = 1 adds values to an existing key (a missing one is skipped);
  // accumulate[i] = 0 inserts a missing key with values (an existing one is skipped). As
  // HierarchicalKV's accum_or_assign.
  CallStats accum_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                            std::span<const std::uint8_t> accumulate, std::span<const std::uint64_t> scores = {});
  // Puts entries back as they were (load, a tier's promotion): each key gets its row and exactly
  // the given score, whatever the strategy; placement, eviction and growth as for an insert; the
  // admission filter is not consulted (these keys were admitted once).
  CallStats restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                    std::span<const std::uint64_t> scores, Evicted* evicted = nullptr);
  CallStats erase(std::span<const std::uint64_t> keys);
  std::int64_t erase_if(const std::function<bool(std::uint64_t key, std::uint64_t score)>& predicate);

  // Entries of the slots [offset, offset + count) of the table, in slot order (a full pass:
  // offsets 0, count, 2 count, ... up to capacity()). Returns how many were occupied.
  std::int64_t export_batch(std::int64_t offset, std::int64_t count, std::vector<std::uint64_t>& keys,
                            std::vector<float>& values, std::vector<std::uint64_t>& scores) const;
  // Every entry whose score is >= threshold (an incremental dump).
  std::int64_t export_batch_if(std::uint64_t threshold, std::vector<std::uint64_t>& keys, std::vector<float>& values,
                               std::vector<std::uint64_t>& scores) const;

  // For dump (kv/table_file.hpp): one read call over every entry whose score is >= threshold, so
  // the entries form a consistent snapshot even while other threads wait to change the table.
  // Under the read lock it calls begin() once with what follows (ExportSummary), then chunk()
  // with at most chunk_entries entries at a time (every chunk full but the last), in slot order.
  // Rows are in the stored form: row_width values of options().value_type each, packed.
  // Callbacks must not call the table (the lock is held); an exception from one ends the call
  // and releases the lock. (Added for dump; nothing else of HostTable changed.)
  struct ExportSummary {
    std::int64_t count = 0;       // entries with score >= threshold
    std::uint64_t max_score = 0;  // their largest score (0 when count is 0)
    std::uint64_t score_now = 0;  // get_score() under the lock
  };
  struct StoredEntries {
    std::span<const std::uint64_t> keys;
    std::span<const std::uint64_t> scores;
    std::span<const std::byte> rows;
  };
  std::int64_t export_stored(std::uint64_t threshold, std::int64_t chunk_entries,
                             const std::function<void(const ExportSummary&)>& begin,
                             const std::function<void(const StoredEntries&)>& chunk) const;

  // The score the next score-setting call would give a new key for which it passes no score
  // (dynamicemb's get_score): the clock now, the next step, the set_score value, 1 under LFU
  // and FREQUENCY (whose new keys then score the filter's estimate; kv/score_rules.hpp).
  std::uint64_t get_score() const;
  // CUSTOMIZED: the score of calls that pass no per-key scores.
  void set_score(std::uint64_t score) noexcept { custom_score_.store(score, std::memory_order_relaxed); }
  void set_epoch(std::uint32_t epoch) noexcept { epoch_.store(epoch, std::memory_order_relaxed); }
  // After a checkpoint's entries are restored: later calls score on from `score_now`, the saved
  // table's get_score() (kv/score_rules.hpp's continue_scores). Not a call: before sharing.
  void continue_scores(std::uint64_t score_now);
  // The admission filter's estimate of a key's sightings (0 without a filter); a read call.
  int admission_estimate(std::uint64_t key) const;
  std::size_t admission_memory_bytes() const;
  // Not a call: set it before sharing the table between threads. The rows live in host memory:
  // a device context (MemorySpace::kDevice) is an Error and leaves the context as it was.
  void set_execution_context(ExecutionContext context);
  const ExecutionContext& execution_context() const noexcept { return context_; }

 private:
  struct Slot {
    std::int64_t bucket;
    std::int64_t index;  // within the bucket, or -1
  };
  class CallScores;
  // The body of a call for key i: it updates `stats`, and appends to `evicted` when given.
  using PerKey = std::function<void(std::size_t i, CallStats& stats, Evicted* evicted)>;
  // for_each_key prefetches in three stages, so that the misses of consecutive keys overlap:
  // kPrefetchAhead keys ahead a key's bucket (digests, occupancy: prefetch_bucket); half as far
  // its candidate keys, or the free slot a new key would take, or a full bucket's scores
  // (prefetch_slot); a quarter as far a present key's score and row (prefetch_present_row).
  // Prefetches are hints only: the keys before may still change the bucket.
  static constexpr std::size_t kPrefetchAhead = 24;
  void prefetch_bucket(std::uint64_t key) const noexcept;
  void prefetch_slot(std::uint64_t key) const noexcept;
  void prefetch_present_row(std::uint64_t key) const noexcept;
  // Runs per_key for every key, as if one by one in input order (see ExecutionContext).
  // `rows`: the call's rows (keys.size() x row_width, read or written by per_key), prefetched
  // when the batch runs by bucket group.
  CallStats for_each_key(std::span<const std::uint64_t> keys, const PerKey& per_key, Evicted* evicted = nullptr,
                         std::span<const float> rows = {}) const;

  void check_keys(std::span<const std::uint64_t> keys) const;
  // insert_or_assign, and insert_and_evict when `evicted` is given.
  CallStats upsert(std::span<const std::uint64_t> keys, std::span<const float> values,
                   std::span<const std::uint64_t> scores, Evicted* evicted);
  void grow_for(std::int64_t incoming);
  void rehash(std::int64_t new_buckets);
  Slot locate(std::uint64_t key) const noexcept;
  // Reads rows and scores of found keys for keys[begin, end) (a read-only call: any split of the
  // batch between threads gives the same result).
  std::int64_t find_range(std::span<const std::uint64_t> keys, std::size_t begin, std::size_t end,
                          std::span<float> values, std::span<std::uint8_t> founds,
                          std::span<std::uint64_t> scores) const noexcept;
  // Inserts `key` (absent) into its bucket; returns the slot, or index kRefusedIndex when its
  // score is too low, kNotAdmittedIndex when the admission filter kept it out (`filtered`: ask
  // the filter; restore does not). An evicted entry goes to `evicted` when given.
  // `new_score(estimate)` gives the key's score from the filter's estimate of it (computed, after
  // its sighting, only for strategies whose new keys score it; 0 otherwise).
  static constexpr std::int64_t kRefusedIndex = -1;
  static constexpr std::int64_t kNotAdmittedIndex = -2;
  template <typename NewScore>
  Slot insert_new(std::uint64_t key, NewScore&& new_score, CallStats& stats, Evicted* evicted, bool filtered = true);
  // Records a sighting of `key` (of `bucket`) with the admission filter; when it ages the bank
  // and the strategy's scores age with it (ScoreAging::kHalveWithBank), halves the bucket's scores.
  void sighted(std::int64_t bucket, std::uint64_t key) noexcept;
  // Sets a present key's score (every score change of a present key goes through here, which
  // keeps the bucket's victim shortlist true).
  void rescore(Slot slot, std::uint64_t score) noexcept;
  void remove(Slot slot) noexcept;

  std::int64_t slots() const noexcept { return buckets_ * bucket_capacity_; }
  // The one loop of the exports (host_table_export.cpp): visit(flat slot) for every stored entry
  // of slots [first_slot, end_slot) whose score is at least min_score, bucket by bucket, each
  // bucket's occupied slots in order.
  template <typename Visit>
  void for_each_stored(std::int64_t first_slot, std::int64_t end_slot, std::uint64_t min_score, Visit&& visit) const;
  // Those entries into the three arrays (cleared first); returns how many.
  std::int64_t export_entries(std::int64_t first_slot, std::int64_t end_slot, std::uint64_t min_score,
                              std::vector<std::uint64_t>& keys, std::vector<float>& values,
                              std::vector<std::uint64_t>& scores) const;
  // Spin lock of one bucket, for the update group (calls of that group may touch one bucket at
  // once; readers and writers of the other groups never overlap them).
  class BucketLock;

  std::int64_t flat(Slot s) const noexcept { return s.bucket * bucket_capacity_ + s.index; }
  void read_row(std::int64_t flat_slot, std::span<float> out) const noexcept;
  void write_row(std::int64_t flat_slot, std::span<const float> in) noexcept;
  void add_to_row(std::int64_t flat_slot, std::span<const float> delta) noexcept;
  std::uint64_t now() const;

  TableOptions options_;
  std::int64_t row_width_ = 0;
  std::int64_t bucket_capacity_ = 0;
  std::int64_t buckets_ = 0;
  std::int64_t size_ = 0;
  std::vector<std::uint8_t> digests_;                          // buckets x bucket_capacity
  std::vector<std::uint64_t> keys_;                            // buckets x bucket_capacity
  std::vector<std::uint64_t> scores_;                          // buckets x bucket_capacity
  std::vector<std::uint32_t> occupied_;                        // per bucket: its first occupied_[b] slots hold keys
  std::vector<VictimShortlist> shortlists_;                    // per bucket: its next victims, while it is full
  MappedArray rows_;                                           // buckets x bucket_capacity x row_width, value_type
                                                               // (memory, or a file in options_.rows_directory)
  AdmissionFilter admission_;                                  // one bank per bucket: touched under the same rules
                                                               // as the bucket (exclusive call or bucket lock)
  bool estimate_new_keys_ = false;                             // the strategy's new keys score the filter's estimate
  bool halve_scores_ = false;                                  // its scores halve with the bucket's bank
  std::unique_ptr<std::atomic<std::uint8_t>[]> bucket_locks_;  // per bucket, 1 while held
  std::atomic<std::uint64_t> clock_offset_ = 0;                // continue_scores': added to the clock
  std::atomic<std::uint64_t> step_ = 0;                        // advanced by update calls running together
  std::atomic<std::uint64_t> custom_score_ = 0;
  std::atomic<std::uint32_t> epoch_ = 0;
  ExecutionContext context_;
  mutable GroupMutex calls_;
  std::uint64_t (*match_)(const std::uint8_t*, std::uint32_t, std::uint8_t);  // kv/digest_match.hpp
  ShortlistScan scan_shortlist_;                                              // kv/victim_search.hpp
};

}  // namespace embscale::kv
