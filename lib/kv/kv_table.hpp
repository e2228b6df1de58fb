// KvTable<Key>: the interface of a dynamic embedding table (the HierarchicalKV / dynamicemb API),
// implemented on the host by HostKvTable (kv/host_kv_table.hpp), and later by a GPU table. (The
// tiered tables, kv/caching_table.hpp and kv/hybrid_table.hpp, offer the subset of calls an
// embedding layer makes: find, find_or_insert, insert_or_assign, erase.) Every call takes a batch: spans of keys, of
// rows (keys.size() x row_width floats, whatever the stored value type) and of per-key flags or
// scores, and runs where the ExecutionContext says.
//
// The semantics of every call are HostTable's (kv/host_table.hpp): a batch behaves as if its
// keys were applied one by one in input order; the score rules are TableOptions::score_strategy's;
// a new key enters its bucket's free slot or replaces the lowest score when its own is not lower,
// if the admission filter (TableOptions::admission) lets it in.
// Keys are int64 or uint64; the three largest uint64 values (int64 -3 .. -1) are reserved.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <vector>

#include "core/execution_context.hpp"
#include "kv/table_options.hpp"

namespace embscale::kv {

template <typename Key>
concept TableKey = std::same_as<Key, std::int64_t> || std::same_as<Key, std::uint64_t>;

template <TableKey Key>
inline constexpr KeyType key_type_of = std::same_as<Key, std::int64_t> ? KeyType::kInt64 : KeyType::kUint64;

// Where a call runs and where its spans live (core/execution_context.hpp). A host table runs on
// host threads and refuses a device context when it is set; a device table reads its stream.
using ExecutionContext = embscale::ExecutionContext;

// What a call did, for counters and the safe-check modes.
struct CallStats {
  std::int64_t found = 0;         // keys that were present
  std::int64_t inserted = 0;      // keys added
  std::int64_t evicted = 0;       // keys removed to make room
  std::int64_t refused = 0;       // keys that could not be inserted (a full bucket of higher scores)
  std::int64_t not_admitted = 0;  // new keys with a place that the admission filter kept out
                                  // (TableOptions::admission; kv/admission.hpp)

  CallStats& operator+=(const CallStats& o) noexcept {
    found += o.found;
    inserted += o.inserted;
    evicted += o.evicted;
    refused += o.refused;
    not_admitted += o.not_admitted;
    return *this;
  }
};

// Entries taken out of a table (evicted, exported): keys, their rows (keys.size() x row_width)
// and scores, in the order the call produced them.
template <TableKey Key> struct Entries {
  std::vector<Key> keys;
  std::vector<float> values;
  std::vector<std::uint64_t> scores;

  std::size_t size() const noexcept { return keys.size(); }
  void clear() noexcept {
    keys.clear();
    values.clear();
    scores.clear();
  }
};

// An incremental dump in memory (kv/table_file.hpp's dump_incremental_image): the bytes of the
// file dump_incremental would write, its entry count and the threshold for the next dump.
struct DumpImage {
  std::vector<std::byte> bytes;
  std::int64_t entries = 0;
  std::uint64_t next_threshold = 0;
};

// What load() did (kv/table_file.hpp).
struct LoadStats {
  std::int64_t entries = 0;     // entries in the file
  std::int64_t inserted = 0;    // keys the table did not hold
  std::int64_t replaced = 0;    // keys it held: row and score now the file's
  std::int64_t evicted = 0;     // entries removed to make room (the table's, or the file's own)
  std::int64_t refused = 0;     // file entries not inserted (their bucket full of higher scores)
  bool incremental = false;     // the file's header: an incremental dump, its threshold and
  std::uint64_t threshold = 0;  // next threshold
  std::uint64_t next_threshold = 0;
};

template <TableKey Key> class KvTable {
 public:
  using KeySpan = std::span<const Key>;
  using ScoreSpan = std::span<const std::uint64_t>;

  virtual ~KvTable() = default;

  virtual const TableOptions& options() const = 0;
  // Values per row: dim, then the optimizer state in training mode.
  virtual std::int64_t row_width() const = 0;
  virtual std::int64_t size() const = 0;
  virtual std::int64_t capacity() const = 0;
  virtual double load_factor() const = 0;
  virtual void reserve(std::int64_t capacity) = 0;
  virtual void clear() = 0;

  // values rows of found keys are written (others untouched); founds: 1 per found key; scores
  // (optional): the found keys' scores. Never changes a score.
  virtual CallStats find(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds,
                         std::span<std::uint64_t> scores = {}) const = 0;
  // find that also refreshes the found keys' scores (LRU/LFU lookups).
  virtual CallStats find_and_update(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds) = 0;
  virtual void contains(KeySpan keys, std::span<std::uint8_t> founds) const = 0;
  // scores: one per key under CUSTOMIZED (empty: the set_score value), ignored otherwise.
  virtual CallStats insert_or_assign(KeySpan keys, std::span<const float> values, ScoreSpan scores = {}) = 0;
  // insert_or_assign that returns every evicted entry (appended to `evicted`).
  virtual CallStats insert_and_evict(KeySpan keys, std::span<const float> values, ScoreSpan scores,
                                     Entries<Key>& evicted) = 0;
  // Missing keys are inserted with the initializer's row (training) and their rows returned; in
  // evaluation mode they read the eval initializer and are not inserted. A key the admission
  // filter keeps out reads the initializer's row and is not found.
  virtual CallStats find_or_insert(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds = {},
                                   ScoreSpan scores = {}) = 0;
  // Present keys only: rows change, scores do not.
  virtual CallStats assign(KeySpan keys, std::span<const float> values) = 0;
  // Present keys only: CUSTOMIZED takes `scores`; other strategies refresh as on a hit.
  virtual CallStats assign_scores(KeySpan keys, ScoreSpan scores) = 0;
  // accumulate[i] = 1: add row i to a present key (absent: skipped); 0: insert an absent key
  // with row i (present: skipped).
  virtual CallStats accum_or_assign(KeySpan keys, std::span<const float> values,
                                    std::span<const std::uint8_t> accumulate, ScoreSpan scores = {}) = 0;
  // Puts entries back with exactly their scores (load, promotion from a slow tier).
  virtual CallStats restore(KeySpan keys, std::span<const float> values, ScoreSpan scores,
                            Entries<Key>* evicted = nullptr) = 0;
  virtual CallStats erase(KeySpan keys) = 0;
  virtual std::int64_t erase_if(const std::function<bool(Key key, std::uint64_t score)>& predicate) = 0;

  // The occupied entries among slots [offset, offset + count) (a full pass: offsets 0, count,
  // 2 count, ... below capacity()); `out` is replaced. Returns how many.
  virtual std::int64_t export_batch(std::int64_t offset, std::int64_t count, Entries<Key>& out) const = 0;
  // Every entry whose score is >= threshold; `out` is replaced.
  virtual std::int64_t export_batch_if(std::uint64_t threshold, Entries<Key>& out) const = 0;

  // Dump and load (kv/table_file.hpp: the format, atomicity and compatibility rules). dump writes
  // every entry as one consistent snapshot, atomically (a temporary file renamed over `path`);
  // dump_incremental the entries whose score is >= threshold, returning the threshold for the
  // next incremental dump; load validates the whole file, refuses an incompatible one (the table
  // unchanged) and restores its entries with their scores (admission, eviction and growth as
  // for an insert: a dump loads into a table of any capacity).
  virtual void dump(const std::filesystem::path& path) const = 0;
  virtual std::uint64_t dump_incremental(const std::filesystem::path& path, std::uint64_t threshold) const = 0;
  // dump_incremental's file taken into memory (kv::write_dump_image writes it later).
  virtual DumpImage dump_incremental_image(std::uint64_t threshold) const = 0;
  virtual LoadStats load(const std::filesystem::path& path) = 0;

  // The score the next score-setting call would give a touched key.
  virtual std::uint64_t get_score() const = 0;
  virtual void set_score(std::uint64_t score) = 0;
  virtual void set_epoch(std::uint32_t epoch) = 0;
  // After restoring a saved table's entries: later calls score on from `score_now`, the saved
  // table's get_score() (kv/score_rules.hpp's continue_scores).
  virtual void continue_scores(std::uint64_t score_now) = 0;
  // Every later call runs where `context` says, its spans in context.memory. An Error (the
  // table unchanged) for a context the table cannot serve: a host table refuses device memory.
  virtual void set_execution_context(ExecutionContext context) = 0;
  virtual const ExecutionContext& execution_context() const = 0;
};

}  // namespace embscale::kv
