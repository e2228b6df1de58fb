// Admission filters of the dynamic table: which new keys may enter it at all, and the
// frequency estimates the FREQUENCY score strategy starts a new key from.
//
// A table without a filter admits every newcomer that has a place (a free slot, or a victim of
// lower score). A filter refuses some of them to keep one-hit wonders from pushing out keys that
// come back; the eviction-policy comparison (bench/micro/eviction_policies.cpp) measures both filters against none.
//
// * k-count (dynamicemb's KCounter): a newcomer is admitted on its k-th sighting, counted by
//   bounded counters. Applies to every newcomer, whether its bucket has a free slot or not.
// * TinyLFU (Einziger, Friedman and Manes; the Caffeine cache's rule): a newcomer takes a free
//   slot freely; in a full bucket it replaces the victim only when its estimated frequency is
//   strictly higher than the victim's (ties keep the incumbent).
//
// Both count sightings in a count-min sketch of saturating 8-bit counters (`max_count` <= 255)
// with aging. The layout, which tests/kv/admission_reference.hpp reimplements independently:
// * Banks. The sketch is one bank per table bucket; a key's counters live only in the bank of
//   its bucket, mix64(key) & (buckets - 1).
// * Blocks (Caffeine's layout): a bank is `blocks` blocks of 64 counters, one 64-byte cache line
//   each, blocks = the power of two >= depth x cells_per_slot x bucket_capacity / 64 (at least
//   1): so cells_per_slot counters per slot per row, as in a sketch of `depth` separate rows. All
//   of a key's counters lie in one block, so recording or estimating a key touches one line.
//   With h = mix64(key ^ salt), salt = mix64(seed ^ 0x5bd1e9955bd1e995) (independent of the
//   bucket bits, mix64(key)'s low bits), the key's block is (h >> 48) & (blocks - 1), and its
//   row-r counter (r < depth) is counter r x per_row + ((((h >> 6r) & 63) x per_row) >> 6) of
//   the block, per_row = 64 / depth rounded down: row r owns its own per_row counters of the
//   block, and a multiply-shift (no division) picks one of them.
// * Recording a sighting adds 1 (saturating at max_count) to the key's counter of every row, or
//   with `conservative_update` only to those of its counters that hold the smallest value
//   (Estan and Varghese's conservative update: the estimate is the same, other keys' estimates
//   are inflated less). The estimate is the smallest of the key's counters (never below the true
//   count since the last halving, until saturation).
// * Aging. A bank counts its recorded sightings; the aging_period-th since its last halving
//   (aging_period = aging_factor x bucket_capacity, i.e. ten times the slots for the default)
//   halves every counter of the bank (c >>= 1) and restarts the count at 0. aging_factor 0: never.
//   record() says when it halved the bank: the FREQUENCY score strategy halves the bucket's
//   scores then (kv/score_rules.hpp), so scores and estimates age together.
// * Growth. When the table doubles, bucket b splits into b and b + old buckets; both new banks
//   start as copies of bank b (counters and sighting count). A key's counters do not depend on the
//   bucket count, so every key keeps exactly its estimate across a rehash.
// * clear() zeroes every bank.
//
// Determinism and threads. The filter's state is a pure function of the sequence of calls on it
// and the seed. Because a bank belongs to one bucket, keys of different buckets never share a
// counter or an aging count, so calls on different buckets commute: the table's bucket-group
// partition (kv/bucket_partition.hpp) gives the same result on 1 or N threads with no data race.
// Calls on one bank must not overlap; the table serializes them (exclusive calls, or the bucket
// spin lock of the update group).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kv/portable/sketch_ref.hpp"

namespace embscale::kv {

struct AdmissionOptions {
  enum class Kind { kNone, kKCount, kTinyLfu };
  Kind kind = Kind::kNone;
  int threshold_k = 2;               // k-count: admitted on the k-th sighting, in [1, max_count]
  int max_count = 15;                // counters saturate here (15: Caffeine's 4-bit counters), [1, 255]
  int depth = 4;                     // counters per key (rows of the sketch), [1, 8]
  double cells_per_slot = 2.0;       // counters per row per table slot, (0, 64]
  double aging_factor = 10.0;        // halve a bank after aging_factor x bucket_capacity sightings;
                                     // 0: never. [0, 1e6]
  bool conservative_update = false;  // add a sighting only to the key's smallest counters
  std::uint64_t seed = 0;            // of the sketch's hashes
};

// Throws InputError naming the field (as "table options: admission.<field>: expected ...").
void check_admission_options(const AdmissionOptions& options);

std::string to_string(AdmissionOptions::Kind kind);

// Where the table would put a newcomer: a free slot of its bucket, the slot of a victim (lowest
// score, and the newcomer's score is not lower), or nowhere (the table refuses it on score).
enum class Placement { kFreeSlot, kEvict, kRefused };

namespace detail {

// The banked, blocked count-min sketch with aging described above: the engine of both filters.
// Its arithmetic is kv/portable/sketch_ref.hpp's, which the GPU table runs too; this class owns
// the arrays.
class BankedSketch {
 public:
  BankedSketch() = default;
  BankedSketch(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets);

  // The key's bank must be the one of `buckets` buckets (the table's current count). Returns
  // true when this sighting halved the bank (it was the aging_period-th since the last halving).
  bool record(std::uint64_t key) noexcept;
  int estimate(std::uint64_t key) const noexcept;
  // Hints the key's block into the cache (the table calls it ahead, as it prefetches buckets).
  void prefetch(std::uint64_t key) const noexcept;
  // Doubles (or more: any power-of-two multiple) the banks: each new bank copies its parent.
  void grow(std::int64_t buckets);
  void clear() noexcept;
  std::size_t memory_bytes() const noexcept;
  std::int64_t blocks_per_bank() const noexcept { return static_cast<std::int64_t>(layout_.blocks); }
  std::uint64_t aging_period() const noexcept { return layout_.period; }
  // The portable view over this sketch's arrays (valid until grow reallocates them): what the
  // GPU table's logic run on the host records into.
  portable::SketchRef portable_view() const noexcept;

 private:
  struct alignas(64) Block {
    std::uint8_t counters[64];
  };
  static_assert(sizeof(Block) == 64, "a block is one cache line: a key's counters are read with one miss");

  portable::SketchRef layout_;                    // its parameters (no arrays: portable_view adds them)
  mutable std::vector<Block> blocks_of_banks_;    // buckets x blocks (mutable: the view is one type
  mutable std::vector<std::uint32_t> sightings_;  // for reads and writes), per bank since its halving
};

}  // namespace detail

// The table's filter: none, k-count or TinyLFU, chosen by AdmissionOptions::kind. A sighting is
// recorded first (record), then a newcomer's fate is decided on the estimates that include it
// (admits); admit() does both, in that order.
// A sketch's parameters for a table of `buckets` buckets of `bucket_capacity` slots (the layout
// above), its arrays not set: the GPU table allocates them in device memory.
portable::SketchRef sketch_layout(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets);
// The portable code's name of a filter kind.
portable::FilterKind portable_filter_kind(AdmissionOptions::Kind kind) noexcept;

class AdmissionFilter {
 public:
  AdmissionFilter() = default;  // none
  AdmissionFilter(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets);

  bool enabled() const noexcept { return kind_ != AdmissionOptions::Kind::kNone; }
  // One sighting of a key: a newcomer, or a hit that touches its score. Returns true when it
  // halved the key's bank (never without a filter). Inline, so that a table without a filter
  // pays one predictable branch per key.
  bool record(std::uint64_t key) noexcept { return enabled() && sketch_.record(key); }
  // Whether a newcomer whose sighting is recorded may enter: always false for kRefused, always
  // true without a filter; k-count: its estimate reached k; TinyLFU: a free slot, or an estimate
  // strictly above the victim's. `victim` matters for kEvict only.
  bool admits(std::uint64_t key, Placement placement, std::uint64_t victim) const noexcept;
  bool admit(std::uint64_t key, Placement placement, std::uint64_t victim) noexcept {
    record(key);
    return admits(key, placement, victim);
  }
  void prefetch(std::uint64_t key) const noexcept {
    if (enabled()) sketch_.prefetch(key);
  }
  // The table now has `buckets` buckets (a power-of-two multiple of the old count).
  void resize(std::int64_t buckets);
  void clear() noexcept;
  std::size_t memory_bytes() const noexcept;
  // The sketch's estimate of a key (0 without a filter).
  int estimate(std::uint64_t key) const noexcept { return enabled() ? sketch_.estimate(key) : 0; }
  // The sketch's portable view (no arrays without a filter).
  portable::SketchRef portable_view() const noexcept {
    return enabled() ? sketch_.portable_view() : portable::SketchRef{};
  }
  AdmissionOptions::Kind kind() const noexcept { return kind_; }
  int threshold_k() const noexcept { return k_; }

 private:
  AdmissionOptions::Kind kind_ = AdmissionOptions::Kind::kNone;
  int k_ = 2;
  detail::BankedSketch sketch_;
};

}  // namespace embscale::kv
