// Admission filters of the dynamic table: which new keys may enter it at all (issue 4).
//
// A table without a filter admits every newcomer that has a place (a free slot, or a victim of
// lower score). A filter refuses some of them to keep one-hit wonders from pushing out keys that
// come back; the eviction study measures both filters against none.
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
//   its bucket, mix64(key) & (buckets - 1). A bank is `depth` rows of `width` counters, width =
//   the power of two >= cells_per_slot x bucket_capacity. Row r's counter of a key is
//   mix64((key + (r + 1) x 0x9e3779b97f4a7c15) ^ salt) & (width - 1), with salt =
//   mix64(seed ^ 0x5bd1e9955bd1e995): independent of the bucket bits (mix64(key)'s low bits).
// * Recording a sighting adds 1 (saturating at max_count) to the key's counter of every row;
//   the estimate is the smallest of them (never below the true count since the last halving,
//   until saturation).
// * Aging. A bank counts its recorded sightings; the aging_period-th since its last halving
//   (aging_period = aging_factor x bucket_capacity, i.e. ten times the slots for the default)
//   halves every counter of the bank (c >>= 1) and restarts the count at 0. aging_factor 0: never.
// * Growth. When the table doubles, bucket b splits into b and b + old buckets; both new banks
//   start as copies of bank b (counters and sighting count). A key's cells do not depend on the
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
#include <variant>
#include <vector>

namespace embscale::kv {

struct AdmissionOptions {
  enum class Kind { kNone, kKCount, kTinyLfu };
  Kind kind = Kind::kNone;
  int threshold_k = 2;            // k-count: admitted on the k-th sighting, in [1, max_count]
  int max_count = 15;             // counters saturate here (15: Caffeine's 4-bit counters), [1, 255]
  int depth = 4;                  // rows (hash functions) of the sketch, [1, 8]
  double cells_per_slot = 2.0;    // counters per row per table slot, (0, 64]
  double aging_factor = 10.0;     // halve a bank after aging_factor x bucket_capacity sightings;
                                  // 0: never. [0, 1e6]
  std::uint64_t seed = 0;         // of the sketch's hashes
};

// Throws InputError naming the field (as "table options: admission.<field>: expected ...").
void check_admission_options(const AdmissionOptions& options);

std::string to_string(AdmissionOptions::Kind kind);

// Where the table would put a newcomer: a free slot of its bucket, the slot of a victim (lowest
// score, and the newcomer's score is not lower), or nowhere (the table refuses it on score).
enum class Placement { kFreeSlot, kEvict, kRefused };

namespace detail {

// The banked count-min sketch with aging described above: the engine of both filters.
class BankedSketch {
 public:
  BankedSketch() = default;
  BankedSketch(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets);

  // The key's bank must be the one of `buckets` buckets (the table's current count).
  void record(std::uint64_t key) noexcept;
  int estimate(std::uint64_t key) const noexcept;
  // Doubles (or more: any power-of-two multiple) the banks: each new bank copies its parent.
  void grow(std::int64_t buckets);
  void clear() noexcept;
  std::size_t memory_bytes() const noexcept;
  std::int64_t width() const noexcept { return width_; }
  std::uint64_t aging_period() const noexcept { return period_; }

 private:
  std::size_t bank_of(std::uint64_t key) const noexcept;
  std::size_t cell(std::uint64_t key, int row) const noexcept;  // within a bank
  void halve(std::size_t bank) noexcept;

  int depth_ = 0;
  std::int64_t width_ = 0;        // a power of two
  std::uint8_t max_ = 0;
  std::uint64_t period_ = 0;      // 0: no aging
  std::uint64_t salt_ = 0;
  std::int64_t buckets_ = 0;
  std::vector<std::uint8_t> counters_;    // buckets x depth x width
  std::vector<std::uint32_t> sightings_;  // per bank, since its last halving
};

}  // namespace detail

// What both filters share: the banked sketch of sightings, which hits feed.
class SketchAdmission {
 public:
  void record_hit(std::uint64_t key) noexcept { sketch_.record(key); }
  detail::BankedSketch& sketch() noexcept { return sketch_; }
  const detail::BankedSketch& sketch() const noexcept { return sketch_; }

 protected:
  SketchAdmission(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets)
      : sketch_(options, bucket_capacity, buckets) {}
  detail::BankedSketch sketch_;
};

// Admitted on the k-th sighting (this one included).
class KCountAdmission : public SketchAdmission {
 public:
  KCountAdmission(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets);
  bool admit(std::uint64_t key, Placement placement, std::uint64_t victim) noexcept;

 private:
  int k_ = 2;
};

// Free slot: admitted; evict: admitted iff estimate(key) > estimate(victim), after recording
// this sighting; refused: recorded only.
class TinyLfuAdmission : public SketchAdmission {
 public:
  TinyLfuAdmission(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets)
      : SketchAdmission(options, bucket_capacity, buckets) {}
  bool admit(std::uint64_t key, Placement placement, std::uint64_t victim) noexcept;
};

// The table's filter: none, k-count or TinyLFU, chosen by AdmissionOptions::kind.
class AdmissionFilter {
 public:
  AdmissionFilter() = default;  // none
  AdmissionFilter(const AdmissionOptions& options, std::int64_t bucket_capacity, std::int64_t buckets);

  bool enabled() const noexcept { return !std::holds_alternative<std::monostate>(filter_); }
  // A present key's score was touched (a hit): one sighting. Inline, so that a table without a
  // filter pays one predictable branch per hit.
  void record_hit(std::uint64_t key) noexcept {
    if (enabled()) record(key);
  }
  // A newcomer (absent key) and where it would go; records the sighting. Whether it may enter:
  // always false for kRefused, always true without a filter. `victim` matters for kEvict only.
  bool admit(std::uint64_t key, Placement placement, std::uint64_t victim) noexcept;
  // The table now has `buckets` buckets (a power-of-two multiple of the old count).
  void resize(std::int64_t buckets);
  void clear() noexcept;
  std::size_t memory_bytes() const noexcept;
  // The sketch's estimate of a key (0 without a filter), for tests and studies.
  int estimate(std::uint64_t key) const noexcept;

 private:
  void record(std::uint64_t key) noexcept;

  std::variant<std::monostate, KCountAdmission, TinyLfuAdmission> filter_;
};

}  // namespace embscale::kv
