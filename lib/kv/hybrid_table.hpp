// HybridTable: dynamicemb's hybrid placement (dynamicemb's global_hbm_for_values) on a CPU. A byte
// budget of rows lives in the fast tier (memory); the rest of the table's keys live in the slow
// tier (a HostTable whose rows are in an unnamed file of a directory, kv/mapped_array.hpp).
// Placement is by hash, fixed for a key's life: a key is in the fast tier when
// hash_combine(kPlacementSalt, key) / 2^64 < fast_share, with
//   fast_share = min(1, budget / (max_capacity x row bytes)),
// so about fast_share of the keys, and of the lookups of any distribution that does not favour
// particular hashes, are served from memory. Each tier is a full HostTable with max_capacity
// split by the share; a batch is split by tier with input order kept inside each, so the result
// is each tier's one-key-at-a-time result (keys of different tiers never interact). Scores are
// per tier (under STEP each tier counts the calls that reach it). Calls are made one at a time.
#pragma once

#include <array>
#include <string>

#include "kv/host_table.hpp"
#include "kv/tier_batch.hpp"

namespace embscale::kv {

struct HybridOptions {
  std::int64_t fast_row_bytes = 0;  // the budget: bytes of rows (in the stored value type) in memory
  std::string slow_directory;       // where the slow tier's rows file is made
};

class HybridTable {
 public:
  static constexpr std::uint64_t kPlacementSalt = 0x6879627269642d31ULL;  // "hybrid-1"

  HybridTable(TableOptions options, HybridOptions hybrid);

  double fast_share() const noexcept { return fast_share_; }
  bool in_fast_tier(std::uint64_t key) const noexcept;
  std::int64_t row_width() const noexcept { return fast_.row_width(); }
  std::int64_t size() const { return fast_.size() + slow_.size(); }
  const HostTable& fast() const noexcept { return fast_; }
  const HostTable& slow() const noexcept { return slow_; }

  CallStats find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                 std::span<std::uint64_t> scores = {}) const;
  CallStats find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                           std::span<std::uint8_t> founds = {});
  CallStats insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores = {});
  CallStats erase(std::span<const std::uint64_t> keys);

  // Load (kv/tiered_file.hpp): puts distinct entries back with exactly their scores, each in the
  // tier its hash places it (restore there: placement, eviction and growth as for an insert).
  CallStats restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                    std::span<const std::uint64_t> scores);
  // Dump (kv/tiered_file.hpp): every entry of both tiers once, in batches, rows in float.
  void for_each_entry(const EntryVisitor& visit) const;
  const TableOptions& options() const noexcept { return fast_.options(); }

 private:
  HybridTable(const TableOptions& options, const HybridOptions& hybrid, std::int64_t fast_slots);
  // The batch split by tier: [0] fast, [1] slow.
  std::array<SubBatch, 2> split(std::span<const std::uint64_t> keys) const;

  double fast_share_ = 1.0;
  HostTable fast_;
  HostTable slow_;
};

}  // namespace embscale::kv
