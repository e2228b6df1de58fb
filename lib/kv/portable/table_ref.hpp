// The device table's per-key operations over all its buckets: what a bulk kernel runs with one
// tile per key of a batch, and what the host runs key by key with HostTile to test it (the
// bucket logic itself is bucket_ref.hpp's). Written once for host and device, as bucket_ref.hpp.
//
// A key's bucket is the CPU table's: h = mix64(key), bucket = h & (buckets - 1), digest = h >> 56
// (kv/host_table.hpp), so the two tables place every key in the same bucket and a dump moves
// between them key by key. Rows (row_width floats a slot, the values then the optimizer state)
// sit slot-aligned in their own array; a tile's lanes copy a row together, lane l its values
// l, l + N, ... (on the device each thread its own, coalesced across the tile).
//
// Scores follow kv/score_rules.hpp, the one rule table of both tables: a new key gets the call's
// new-key score, a present key present_key_score(old, ...). Admission filters and growth are the
// bulk operations' (not here).
//
// Batches: one operation per distinct key. The device table de-duplicates a batch before these
// run, which is also what makes them exact for keys in one bucket at once (bucket_ref.hpp); the
// host runs them one key after the other, in input order, which is the CPU table's semantics
// for a batch of distinct keys (tests/kv/table_ref_test.cpp holds it to the reference model).
#pragma once

#include <cstdint>

#include "core/hash.hpp"
#include "kv/portable/bucket_ref.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv::portable {

// The table's arrays (device memory on the device): buckets x bucket_capacity slots.
struct TableArrays {
  std::uint64_t* keys = nullptr;
  std::uint64_t* scores = nullptr;
  std::uint8_t* digests = nullptr;
  float* rows = nullptr;              // slots [0, near_slots) x row_width
  std::uint64_t buckets = 0;          // a power of two
  std::uint32_t bucket_capacity = 0;  // a multiple of the tile's lanes
  std::uint32_t row_width = 0;
  // Hybrid mode (HierarchicalKV's HBM + HMEM): the rows of slots [near_slots, all) are in
  // far_rows, pinned host memory mapped into the device's address space; near_slots is a whole
  // number of buckets. Without it every row is in `rows`.
  float* far_rows = nullptr;
  std::uint64_t near_slots = ~std::uint64_t{0};
};

// The row of flat slot `slot` (bucket x bucket_capacity + index), near or far.
EMBSCALE_HD inline float* row_of(const TableArrays& a, std::uint64_t slot) {
  return slot < a.near_slots ? a.rows + slot * a.row_width : a.far_rows + (slot - a.near_slots) * a.row_width;
}

// A call's score inputs, read once per call (score_rules.hpp's call score): the rules of the
// table's strategy, the score a new key takes, and the epoch's high bits for the epoch rules.
struct CallScores {
  const ScoreRules* rules = nullptr;
  std::uint64_t as_new = 0;
  std::uint64_t epoch_high = 0;
};

template <class Tile, class Atomics> class TableRef {
 public:
  using Bucket = BucketRef<Tile, Atomics>;

  EMBSCALE_HD explicit TableRef(const TableArrays& arrays) : a_(arrays) {}

  // Where `key` lives: its bucket, its slots' first index in the table's arrays, its digest and
  // its probe start.
  struct Place {
    Bucket bucket;
    std::uint64_t first_slot;
    std::uint8_t digest;
    std::uint32_t start;
  };
  EMBSCALE_HD Place place_of(std::uint64_t key) const {
    const std::uint64_t hash = mix64(key);
    const std::uint64_t first = (hash & (a_.buckets - 1)) * a_.bucket_capacity;
    Bucket bucket(a_.keys + first, a_.scores + first, a_.digests + first, a_.bucket_capacity);
    return Place{bucket, first, static_cast<std::uint8_t>(hash >> 56), bucket.probe_start(hash)};
  }

  // Copies the row of `key` into `row` and its score into `score`; false when absent (nothing
  // written). Never changes a score.
  EMBSCALE_HD bool find(const Tile& tile, std::uint64_t key, float* row, std::uint64_t* score) const {
    const Place p = place_of(key);
    const std::uint32_t slot = p.bucket.find(tile, key, p.digest, p.start);
    if (slot == kNoSlot) return false;
    copy_row(tile, row_at(p.first_slot + slot), row);
    if (score) *score = a_.scores[p.first_slot + slot];
    return true;
  }

  // Sets the row of `key` to `row`: a present key's score follows the present-key rule, a new one
  // is placed by insert_or_evict with the call's new-key score. An evicted entry's row is copied
  // into `evicted_row` (when not null) before the newcomer's is written.
  EMBSCALE_HD PlacementResult insert_or_assign(const Tile& tile, std::uint64_t key, const float* row,
                                               const CallScores& call, float* evicted_row) {
    const Place p = place_of(key);
    PlacementResult result;
    result.slot = p.bucket.find(tile, key, p.digest, p.start);
    if (result.slot == kNoSlot) return place_new(tile, p, key, row, call, evicted_row);
    result.placement = Placement::kFound;
    std::uint64_t& score = a_.scores[p.first_slot + result.slot];
    score = present_key_score(*call.rules, score, call.as_new, call.epoch_high);
    copy_row(tile, row, row_at(p.first_slot + result.slot));
    return result;
  }

  // accum_or_assign's one key: a present key's row gets `values` added and its score follows the
  // present-key rule when `accumulate`, and is left alone when not; a missing key is inserted
  // with `values` as its row when not `accumulate` (placed as insert_or_assign places it), and
  // left missing (kAbsent) when `accumulate`. The CPU table's accum_or_assign, key by key.
  EMBSCALE_HD PlacementResult accum_or_assign(const Tile& tile, std::uint64_t key, const float* values, bool accumulate,
                                              const CallScores& call) {
    const Place p = place_of(key);
    PlacementResult result;
    result.slot = p.bucket.find(tile, key, p.digest, p.start);
    if (result.slot != kNoSlot) {
      result.placement = Placement::kFound;
      if (accumulate) {
        std::uint64_t& score = a_.scores[p.first_slot + result.slot];
        score = present_key_score(*call.rules, score, call.as_new, call.epoch_high);
        add_to_row(tile, values, row_at(p.first_slot + result.slot));
      }
      return result;
    }
    if (accumulate) {
      result.placement = Placement::kAbsent;
      return result;
    }
    return place_new(tile, p, key, values, call, nullptr);
  }

  // Removes `key`; false when it was absent.
  EMBSCALE_HD bool erase(const Tile& tile, std::uint64_t key) {
    const Place p = place_of(key);
    Bucket bucket = p.bucket;
    return bucket.erase(tile, key, p.digest, p.start) != kNoSlot;
  }

  // A rehash's share of one bucket: the entries of bucket `b` of `from`, in slot order, claim
  // slots of this table (more buckets, the same bucket capacity and row width), rows following.
  // Bucket b's keys go to the buckets it splits into, which no other bucket of `from` feeds:
  // buckets move in parallel (one tile each on the device) and the result does not depend on
  // their order.
  EMBSCALE_HD void move_bucket(const Tile& tile, const TableArrays& from, std::uint64_t b) {
    for (std::uint64_t slot = b * from.bucket_capacity; slot < (b + 1) * from.bucket_capacity; ++slot) {
      const std::uint64_t key = from.keys[slot];
      if (!holds_key(key)) continue;
      const Place place = place_of(key);
      Bucket bucket = place.bucket;
      const std::uint32_t taken = bucket.claim_free(tile, key, place.digest, from.scores[slot], place.start);
      copy_row(tile, row_of(from, slot), row_at(place.first_slot + taken));
    }
  }

  // The row of flat slot `slot` (bucket x bucket_capacity + index).
  EMBSCALE_HD float* row_at(std::uint64_t slot) const { return row_of(a_, slot); }
  EMBSCALE_HD const TableArrays& arrays() const { return a_; }

  // A row copied by the tile's lanes together: lane l moves values l, l + N, l + 2N, ...
  EMBSCALE_HD void copy_row(const Tile& tile, const float* from, float* to) const {
    tile.for_each_lane(RowCopy{from, to, a_.row_width});
  }
  // `values` added to the row `to`, value by value (each lane its own values).
  EMBSCALE_HD void add_to_row(const Tile& tile, const float* values, float* to) const {
    tile.for_each_lane(RowAdd{values, to, a_.row_width});
  }

 private:
  // A key found absent at `p`, placed (bucket_ref.hpp) with the call's new-key score and given
  // `row`; an evicted entry's row is copied into `evicted_row` (when not null) first.
  EMBSCALE_HD PlacementResult place_new(const Tile& tile, const Place& p, std::uint64_t key, const float* row,
                                        const CallScores& call, float* evicted_row) {
    Bucket bucket = p.bucket;
    const PlacementResult result = bucket.place_absent(tile, key, p.digest, call.as_new, p.start);
    if (result.placement == Placement::kRefused) return result;
    if (result.placement == Placement::kEvicted && evicted_row)
      copy_row(tile, row_at(p.first_slot + result.slot), evicted_row);
    copy_row(tile, row, row_at(p.first_slot + result.slot));
    return result;
  }

  // The copy as a named callable (a lambda would not carry EMBSCALE_HD's exemption from nvcc's
  // host/device call check: bucket_ref.hpp).
  struct RowCopy {
    const float* from;
    float* to;
    std::uint32_t width;
    EMBSCALE_HD void operator()(unsigned lane) const {
      for (std::uint32_t i = lane; i < width; i += Tile::kSize) to[i] = from[i];
    }
  };

  struct RowAdd {
    const float* from;
    float* to;
    std::uint32_t width;
    EMBSCALE_HD void operator()(unsigned lane) const {
      for (std::uint32_t i = lane; i < width; i += Tile::kSize) to[i] += from[i];
    }
  };

  TableArrays a_;
};

}  // namespace embscale::kv::portable
