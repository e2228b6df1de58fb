// CachingTable: dynamicemb's `caching` mode on a CPU. A fast HostTable (memory) in front of a
// slow Storage (kv/storage.hpp: a memory-mapped MappedStorage or RocksDbStorage):
//   * a key lives in exactly one tier;
//   * the fast tier's evictions are demoted into the slow tier with their scores (nothing is
//     lost while the slow tier has room);
//   * find_or_insert promotes a key that misses the fast tier and hits the slow one: it enters
//     the fast tier with its stored score and is then touched as a hit (so LFU counts carry
//     over); a promotion the fast tier refuses (its bucket holds only higher scores) leaves the
//     key in the slow tier, where it is read;
//   * find reads both tiers and changes nothing (no promotion, no score);
//   * insert_or_assign writes the fast tier (a copy in the slow tier is dropped); a key the fast
//     tier refuses is written to the slow tier with the score it would have had.
// A call works on the batch's distinct keys (dynamicemb deduplicates before a lookup too): a key
// repeated in one batch is touched once (LFU counts it once) and reads the same row; for
// insert_or_assign its last row wins. A call makes several calls of the fast tier (present keys
// first, then new ones), so under STEP the fast tier's step advances more than once per call.
// Calls are made one at a time.
#pragma once

#include <memory>

#include "kv/host_table.hpp"
#include "kv/storage.hpp"
#include "kv/tier_batch.hpp"

namespace embscale::kv {

// What moved between the tiers, since construction.
struct TierCounters {
  std::int64_t slow_hits = 0;     // find_or_insert keys found in the slow tier
  std::int64_t promoted = 0;      // slow -> fast
  std::int64_t demoted = 0;       // fast -> slow (evictions)
  std::int64_t slow_writes = 0;   // new keys the fast tier refused or did not admit, written to the slow tier
  std::int64_t slow_dropped = 0;  // entries a bounded slow tier dropped
};

class CachingTable {
 public:
  // The fast tier's options; the slow tier's row_width must equal its row width.
  CachingTable(TableOptions fast_options, std::unique_ptr<Storage> slow);

  std::int64_t row_width() const noexcept { return fast_.row_width(); }
  std::int64_t size() const { return fast_.size() + slow_->size(); }
  const HostTable& fast() const noexcept { return fast_; }
  const Storage& slow() const noexcept { return *slow_; }
  const TierCounters& counters() const noexcept { return counters_; }

  CallStats find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                 std::span<std::uint64_t> scores = {}) const;
  CallStats find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                           std::span<std::uint8_t> founds = {});
  CallStats insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores = {});
  CallStats erase(std::span<const std::uint64_t> keys);

  // Load (kv/tiered_file.hpp): puts distinct entries back with exactly their scores. A key lives
  // in one tier: its slow copy goes, the entry enters the fast tier (restore: placement, eviction
  // and growth as for an insert), the fast tier's evictions are demoted, and an entry the fast
  // tier refuses is written to the slow tier. found: keys either tier held; evicted: entries the
  // slow tier dropped (a bounded storage).
  CallStats restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                    std::span<const std::uint64_t> scores);
  // Dump (kv/tiered_file.hpp): every entry of both tiers once, in batches, rows in float.
  void for_each_entry(const EntryVisitor& visit) const;
  const TableOptions& options() const noexcept { return fast_.options(); }

 private:
  void demote(const Evicted& evicted);
  void write_refused_to_slow(SubBatch& batch, std::uint64_t call_score);

  HostTable fast_;
  std::unique_ptr<Storage> slow_;
  TierCounters counters_;
};

}  // namespace embscale::kv
