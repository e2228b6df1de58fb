// One key of a batch call of the GPU table, written once for the host and the device: what a
// kernel's tile runs for each key of its bucket group, and what kv/portable_table.cpp runs on the
// host with HostTile to test it against the CPU table's reference model. Every call of the CPU
// table (kv/host_table.hpp) is here with exactly its per-key semantics: scores by the strategy's
// rules (kv/score_rules.hpp), sightings and admission (sketch_ref.hpp), placement in a free slot
// or in place of the lowest (score, key), refusal, the initializer's rows.
//
// Batches keep the CPU table's semantics exactly ("as if applied one by one in input order"),
// duplicates included: a call's keys are grouped by bucket, each group in input order
// (BatchRef::order), and one tile runs a group's keys one after another. Keys of different
// buckets never share a slot, a row or an admission bank (the filter keeps one per bucket), so
// groups commute, and the result is the sequential one whatever order the tiles run in. Reads
// (find, contains) need no groups: any order gives the same result.
//
// The price of exactness: a bucket's keys run one after another, so a batch that repeats a hot key
// thousands of times (a Zipf workload sent without de-duplication) makes one tile run a long
// chain while the others idle. Callers that can should de-duplicate first (the embedding step
// does); kernels/bench/kv_table_bench.cu measures the cost on skewed batches.
//
// Per key the call writes its outcome bits (found, inserted, evicted, refused, not admitted),
// from which the bulk call counts its CallStats, and an evicted entry at the key's own position,
// which the bulk call compacts in input order (the CPU table's eviction order).
#pragma once

#include <cstdint>
#include <optional>

#include "kv/portable/initializer_ref.hpp"
#include "kv/portable/sketch_ref.hpp"
#include "kv/portable/table_ref.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv::portable {

enum class BatchOp : std::uint8_t {
  kFind,              // rows and scores of present keys; nothing changes
  kContains,          // found bits only
  kFindAndUpdate,     // find, and a hit's score follows the present-key rule (a sighting)
  kUpsert,            // insert_or_assign / insert_and_evict
  kFindOrInsert,      // training: a missing key inserted with the initializer's row, returned
  kEvalFindOrInsert,  // evaluation: a missing key reads the (eval) initializer, nothing changes
  kAssign,            // present keys' rows only
  kAssignScores,      // present keys' scores only
  kAccumOrAssign,     // accumulate[i]: add to a present key; else insert a missing one
  kRestore,           // entries put back with exactly their scores, no admission filter
  kErase,
};

// A key's outcome bits.
inline constexpr std::uint8_t kKeyFound = 1;
inline constexpr std::uint8_t kKeyInserted = 2;
inline constexpr std::uint8_t kKeyEvicted = 4;  // with kKeyInserted: it took a victim's slot
inline constexpr std::uint8_t kKeyRefused = 8;
inline constexpr std::uint8_t kKeyNotAdmitted = 16;
// A reserved key (2^64-3 .. 2^64-1), left alone: the host refuses them before a call; a batch
// already on the device (a GPU step's) reports them here, and its caller refuses the call.
inline constexpr std::uint8_t kKeyReserved = 32;

// One call's batch (device memory on the device). Row arrays are size x row_width floats.
struct BatchRef {
  BatchOp op = BatchOp::kFind;
  std::uint64_t size = 0;
  const std::uint64_t* keys = nullptr;
  const float* rows_in = nullptr;            // upsert, accum_or_assign, assign, restore
  float* rows_out = nullptr;                 // find_or_insert; find, find_and_update (null: no rows)
  const std::uint64_t* scores_in = nullptr;  // the caller's per-key scores (CUSTOMIZED; assign_scores,
                                             // restore); null: none
  std::uint64_t* scores_out = nullptr;       // find: found keys' scores; null: not asked
  const std::uint8_t* accumulate = nullptr;  // accum_or_assign
  std::uint8_t* outcomes = nullptr;          // per key, the kKey* bits
  std::uint64_t* evicted_keys = nullptr;     // per key, when kKeyEvicted (null: not kept)
  std::uint64_t* evicted_scores = nullptr;
  float* evicted_rows = nullptr;
  // Group g is positions order[offsets[g]] .. order[offsets[g + 1] - 1], one bucket's keys in
  // input order; without order, group g is key g alone (reads).
  const std::uint32_t* order = nullptr;
  const std::uint32_t* offsets = nullptr;
  std::uint64_t groups = 0;
  const std::uint64_t* group_count = nullptr;  // the device: the count where only the device knows
                                               // it (the grouping ran there); groups is then a bound
};

// What every key of one call reads: the table, the call's score inputs (read once per call), the
// admission filter and the initializer the call uses.
struct TableState {
  TableArrays arrays;
  ScoreRules rules = score_rules(ScoreStrategy::kTimestamp);  // by value: a kernel's parameter
  std::uint64_t call_score = 0;                               // score_rules.hpp's call score
  std::uint64_t epoch_high = 0;                               // the epoch << 32
  SketchRef sketch;                                           // arrays null without a filter
  FilterKind filter = FilterKind::kNone;
  int threshold_k = 0;
  InitializerRef initializer;  // training, or the eval initializer for kEvalFindOrInsert
};

// What is wrong with a call's state and batch for BatchRunner, or null when nothing: the inputs
// its operation reads, the outputs it writes, the admission sketch of one bank per bucket. The
// kernels' entry checks it before a launch (a null pointer there would end the CUDA context).
inline const char* batch_problem(const TableState& s, const BatchRef& b) {
  if (b.size == 0) return nullptr;
  if (!b.keys || !b.outcomes) return "no keys or no outcomes";
  const bool rows_in = b.op == BatchOp::kUpsert || b.op == BatchOp::kAccumOrAssign || b.op == BatchOp::kAssign ||
                       b.op == BatchOp::kRestore;
  if (rows_in && !b.rows_in) return "the operation reads rows_in, which is null";
  if ((b.op == BatchOp::kFindOrInsert || b.op == BatchOp::kEvalFindOrInsert) && !b.rows_out)
    return "find_or_insert writes rows_out, which is null";
  if (b.op == BatchOp::kAccumOrAssign && !b.accumulate) return "accum_or_assign without its accumulate flags";
  if (b.op == BatchOp::kRestore && !b.scores_in) return "restore without its scores";
  if (b.evicted_keys && (!b.evicted_scores || !b.evicted_rows)) return "evicted keys without their scores or rows";
  if (b.order && !b.offsets) return "a grouped batch without group offsets";
  if (s.initializer.state_size > 0 && !s.initializer.initial_state) return "an initializer state without its values";
  if (s.filter != FilterKind::kNone) {
    if (!s.sketch.counters || !s.sketch.sightings) return "an admission filter without its sketch";
    if (s.sketch.buckets != s.arrays.buckets) return "the sketch's banks are not the table's buckets";
  }
  return nullptr;
}

template <class Tile, class Atomics> class BatchRunner {
 public:
  using Table = TableRef<Tile, Atomics>;
  using Bucket = typename Table::Bucket;
  using Place = typename Table::Place;

  EMBSCALE_HD BatchRunner(const TableState& state, const BatchRef& batch)
      : s_(state), b_(batch), table_(state.arrays), width_(state.arrays.row_width) {}

  // Every key of group g, in order.
  EMBSCALE_HD_INLINE void run_group(const Tile& tile, std::uint64_t g) {
    if (!b_.order) {
      run_key(tile, g);
      return;
    }
    for (std::uint32_t at = b_.offsets[g]; at < b_.offsets[g + 1]; ++at) run_key(tile, b_.order[at]);
  }

  // Key i of the batch.
  EMBSCALE_HD_INLINE void run_key(const Tile& tile, std::uint64_t i) {
    const std::uint64_t key = b_.keys[i];
    if (key >= kFirstReserved) {  // a slot's marker, never a key: matching it would corrupt the bucket
      if (b_.outcomes) b_.outcomes[i] = kKeyReserved;
      return;
    }
    const Place p = table_.place_of(key);
    const std::uint32_t found = p.bucket.find(tile, key, p.digest, p.start);
    std::uint8_t outcome = found != kNoSlot ? kKeyFound : 0;
    if (found != kNoSlot) outcome |= on_present(tile, p, i, p.first_slot + found);
    else outcome |= on_missing(tile, p, i);
    if (b_.outcomes) b_.outcomes[i] = outcome;
  }

 private:
  // A present key at flat slot `slot`: the call's work; returns outcome bits beyond kKeyFound.
  EMBSCALE_HD_INLINE std::uint8_t on_present(const Tile& tile, const Place& p, std::uint64_t i, std::uint64_t slot) {
    const std::uint64_t key = b_.keys[i];
    float* row = table_.row_at(slot);
    switch (b_.op) {
      case BatchOp::kFind:
        if (b_.rows_out) table_.copy_row(tile, row, out_row(i));
        if (b_.scores_out) b_.scores_out[i] = s_.arrays.scores[slot];
        break;
      case BatchOp::kContains: break;
      case BatchOp::kFindAndUpdate:
        if (b_.rows_out) table_.copy_row(tile, row, out_row(i));
        touch(tile, p, i, slot);
        break;
      case BatchOp::kUpsert:
        touch(tile, p, i, slot);
        table_.copy_row(tile, in_row(i), row);
        break;
      case BatchOp::kFindOrInsert:
        touch(tile, p, i, slot);
        table_.copy_row(tile, row, out_row(i));
        break;
      case BatchOp::kEvalFindOrInsert: table_.copy_row(tile, row, out_row(i)); break;
      case BatchOp::kAssign: table_.copy_row(tile, in_row(i), row); break;
      case BatchOp::kAssignScores: touch(tile, p, i, slot); break;
      case BatchOp::kAccumOrAssign:
        if (b_.accumulate[i]) {
          touch(tile, p, i, slot);
          table_.add_to_row(tile, in_row(i), row);
        }
        break;
      case BatchOp::kRestore:
        s_.arrays.scores[slot] = b_.scores_in[i];
        table_.copy_row(tile, in_row(i), row);
        break;
      case BatchOp::kErase: {
        Bucket bucket = p.bucket;
        bucket.erase(tile, key, p.digest, p.start);
        break;
      }
    }
    return 0;
  }

  // A missing key: inserted by the calls that insert; returns its outcome bits.
  EMBSCALE_HD_INLINE std::uint8_t on_missing(const Tile& tile, const Place& p, std::uint64_t i) {
    const std::uint64_t key = b_.keys[i];
    switch (b_.op) {
      case BatchOp::kUpsert: return insert_with_row(tile, p, i, true);
      case BatchOp::kFindOrInsert: {
        std::uint64_t slot = 0;
        const std::uint8_t outcome = insert_new(tile, p, i, true, slot);
        if (outcome & kKeyRefused) {
          tile.for_each_lane(Fill{out_row(i), width_, 0.0f});  // refused: reads as zeros (SafeCheck)
        } else if (outcome & kKeyNotAdmitted) {
          tile.for_each_lane(Initialize{&s_.initializer, key, out_row(i), width_});
        } else {
          float* row = table_.row_at(slot);
          tile.for_each_lane(Initialize{&s_.initializer, key, row, width_});
          table_.copy_row(tile, row, out_row(i));
        }
        return outcome;
      }
      case BatchOp::kEvalFindOrInsert:
        tile.for_each_lane(Initialize{&s_.initializer, key, out_row(i), width_});
        return 0;
      case BatchOp::kAccumOrAssign: return b_.accumulate[i] ? 0 : insert_with_row(tile, p, i, true);
      case BatchOp::kRestore: return insert_with_row(tile, p, i, false);  // put back: no filter
      case BatchOp::kFind:
      case BatchOp::kContains:
      case BatchOp::kFindAndUpdate:
      case BatchOp::kAssign:
      case BatchOp::kAssignScores:
      case BatchOp::kErase: return 0;
    }
    return 0;
  }

  // A missing key i inserted (insert_new) with its row from rows_in; returns its outcome bits.
  EMBSCALE_HD_INLINE std::uint8_t insert_with_row(const Tile& tile, const Place& p, std::uint64_t i, bool filtered) {
    std::uint64_t slot = 0;
    const std::uint8_t outcome = insert_new(tile, p, i, filtered, slot);
    if (outcome & kKeyInserted) table_.copy_row(tile, in_row(i), table_.row_at(slot));
    return outcome;
  }

  // The score key i takes when new; `estimate`: the filter's estimate of it (NewKeyRule::kEstimate).
  EMBSCALE_HD_INLINE std::uint64_t fresh(std::uint64_t i, int estimate) const {
    return new_key_score(s_.rules, s_.call_score, s_.epoch_high,
                         b_.scores_in ? std::optional<std::uint64_t>(b_.scores_in[i]) : std::nullopt, estimate);
  }

  // A hit that touches its key's score: the present-key rule (a read-modify-write: one lane makes
  // it), then a sighting of the key.
  EMBSCALE_HD_INLINE void touch(const Tile& tile, const Place& p, std::uint64_t i, std::uint64_t slot) {
    tile.single(Rescore{&s_.rules, s_.arrays.scores + slot, fresh(i, 0), s_.epoch_high});
    sighted(tile, p, b_.keys[i]);
  }

  // A sighting of `key` recorded by the filter (one lane: counters are not idempotent); when it
  // ages the bank and the strategy's scores age with it, the bucket's scores halve.
  EMBSCALE_HD_INLINE void sighted(const Tile& tile, const Place& p, std::uint64_t key) {
    if (s_.filter == FilterKind::kNone) return;
    const bool halved = tile.single(Record{&s_.sketch, key}) != 0;
    if (halved && s_.rules.aging == ScoreAging::kHalveWithBank) {
      Bucket bucket = p.bucket;
      bucket.halve_scores(tile);
    }
  }

  // HostTable::insert_new, key by key: the newcomer's sighting (filtered calls), its score, then a
  // free slot or the victim (lowest score, ties the smallest key) when its score is not lower,
  // each subject to the filter. `slot` receives the flat slot it took.
  EMBSCALE_HD_INLINE std::uint8_t insert_new(const Tile& tile, const Place& p, std::uint64_t i, bool filtered,
                                             std::uint64_t& slot) {
    const std::uint64_t key = b_.keys[i];
    filtered = filtered && s_.filter != FilterKind::kNone;
    if (filtered) sighted(tile, p, key);
    const std::uint64_t score =
        b_.op == BatchOp::kRestore
            ? b_.scores_in[i]
            : fresh(i, filtered && needs_admission_estimate(s_.rules) ? s_.sketch.estimate(key) : 0);
    Bucket bucket = p.bucket;
    const std::uint32_t free = bucket.first_free(tile, p.start);
    if (free != kNoSlot) {
      if (filtered && !filter_admits(s_.filter, s_.threshold_k, s_.sketch, key, true, 0)) return kKeyNotAdmitted;
      const std::uint32_t taken = bucket.claim_free(tile, key, p.digest, score, p.start);
      slot = p.first_slot + taken;
      return kKeyInserted;
    }
    const Victim victim = bucket.lowest(tile);
    if (victim.slot == kNoSlot || score < victim.score) return kKeyRefused;
    if (filtered && !filter_admits(s_.filter, s_.threshold_k, s_.sketch, key, false, victim.key))
      return kKeyNotAdmitted;
    slot = p.first_slot + victim.slot;
    if (b_.evicted_keys) {
      b_.evicted_keys[i] = victim.key;
      b_.evicted_scores[i] = victim.score;
      table_.copy_row(tile, table_.row_at(slot), b_.evicted_rows + i * width_);
    }
    // The group's tile is the bucket's only writer: the victim is still there.
    bucket.replace(tile, victim, key, p.digest, score);
    return kKeyInserted | kKeyEvicted;
  }

  // Key i's returned row; null when the call returns none (a find without rows: contains' work).
  EMBSCALE_HD float* out_row(std::uint64_t i) const { return b_.rows_out ? b_.rows_out + i * width_ : nullptr; }
  EMBSCALE_HD const float* in_row(std::uint64_t i) const { return b_.rows_in + i * width_; }

  // Lane work as named callables (a lambda would not carry EMBSCALE_HD's exemption: bucket_ref.hpp).
  struct Rescore {
    const ScoreRules* rules;
    std::uint64_t* score;
    std::uint64_t as_new, epoch_high;
    EMBSCALE_HD std::uint64_t operator()() const {
      return *score = present_key_score(*rules, *score, as_new, epoch_high);
    }
  };
  struct Record {
    const SketchRef* sketch;
    std::uint64_t key;
    EMBSCALE_HD std::uint64_t operator()() const { return sketch->record(key) ? 1 : 0; }
  };
  struct Fill {
    float* row;
    std::uint32_t width;
    float value;
    EMBSCALE_HD void operator()(unsigned lane) const {
      for (std::uint32_t d = lane; d < width; d += Tile::kSize) row[d] = value;
    }
  };
  struct Initialize {
    const InitializerRef* initializer;
    std::uint64_t key;
    float* row;
    std::uint32_t width;
    EMBSCALE_HD void operator()(unsigned lane) const {
      for (std::uint32_t d = lane; d < width; d += Tile::kSize) row[d] = initial_value(*initializer, key, d);
    }
  };

  const TableState& s_;
  const BatchRef& b_;
  Table table_;
  std::uint32_t width_;
};

}  // namespace embscale::kv::portable
