// Trace statistics (`embscale trace stats`): what a stream of Batches looks like to an
// embedding table. Per slot and in total: records, accesses, distinct keys, keys per bag, the
// share of accesses taken by the hottest keys, and a maximum-likelihood Zipf exponent
// (zipf_fit.hpp); for the whole stream, exact reuse distances and the LRU hit-ratio curve
// (reuse_distance.hpp). trace_stats_report.hpp prints them as a text table or JSON.
//
// Usage: TraceStatsCollector c(options); for each batch in stream order: c.add(batch);
// then c.finish(). Access order is the order of Batch::keys (sample-major, slots in order, bag
// positions in order), batches in the order they are added.
//
// Keys are unified-encoded (core/batch.hpp): a key belongs to one slot; a key met in two slots
// is an InputError. All counting goes through one hash map from key to a dense id (KeyIndex),
// with per-key counters in vectors indexed by that id.
//
// Memory, per DISTINCT key (nothing is kept per access; accesses only cost time):
//   KeyIndex 32-64 B, count 8 B, slot 4 B, reuse distances 21-29 B (reuse off: 0),
//   and during finish() a sorted copy of the counts, 8-16 B: about 73-113 B per distinct key.
// So 10^7 distinct keys take ~1 GB, 10^8 ~10 GB; beyond a few 10^8 (and the hard limit of 2^31
// - 2) this needs sampling or sharding by key, which this collector does not do. Time: O(1)
// expected per access for counting, O(log D) for reuse distances, O(D log D) in finish().
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <vector>

#include "core/batch.hpp"
#include "workloads/key_index.hpp"
#include "workloads/reuse_distance.hpp"
#include "workloads/zipf_fit.hpp"

namespace embscale::workloads {

// "Top x% of keys": the ceil(x * distinct keys) hottest distinct keys, at least 1
// (share_rank.hpp), for x = 0.1%, 1% and 10%, in this order.
inline constexpr std::array<std::int64_t, 3> kTopPerMille = {1, 10, 100};

struct TraceStatsOptions {
  // The key space of each slot (HugeCTR's slot_size_array). Empty: the Zipf fit takes n = the
  // distinct keys seen in the slot; given: n = slot_size_array[slot] (and the sum for the total),
  // which accounts for unseen tail keys (zipf_fit.hpp). Must have one entry per slot if given.
  std::vector<std::int64_t> slot_size_array;
  // Exact reuse distances of the whole stream (O(log D) per access, 21-29 B per distinct key).
  bool reuse_distances = true;
};

// The figures of one slot or of the whole stream.
struct KeyStats {
  std::int64_t records = 0;      // samples
  std::int64_t accesses = 0;     // keys, repeats included
  std::int64_t unique_keys = 0;  // distinct keys
  std::int64_t bags = 0;
  std::int64_t bag_nnz_min = 0;  // keys per bag (0 when there is no bag)
  double bag_nnz_mean = 0;
  std::int64_t bag_nnz_max = 0;
  // top_share[i]: share of accesses going to the top kTopPerMille[i] / 1000 of the distinct keys,
  // hottest first; top_keys[i] is how many keys that is.
  std::array<double, kTopPerMille.size()> top_share{};
  std::array<std::int64_t, kTopPerMille.size()> top_keys{};
  ZipfFit zipf;
};

struct TraceStats {
  std::vector<KeyStats> slots;              // one per slot
  KeyStats total;                           // all slots together (one key space)
  std::optional<ReuseDistanceStats> reuse;  // the whole stream; absent when options disable it
};

class TraceStatsCollector {
 public:
  explicit TraceStatsCollector(TraceStatsOptions options = {});

  // Counts the batch's accesses. Throws Error when the batch breaks the CSR invariants
  // (validate_batch), InputError when its num_slots differs from the first batch's (or from
  // slot_size_array's length) or a key appears in two slots; after an InputError for a key the
  // counts hold part of the batch, so the collector should be dropped.
  void add(const Batch& batch);

  // The statistics of everything added so far (the collector can go on afterwards).
  TraceStats finish() const;

 private:
  struct SlotCounters {
    std::int64_t accesses = 0;
    std::int64_t bags = 0;
    std::int64_t nnz_min = 0;
    std::int64_t nnz_max = 0;
  };

  TraceStatsOptions options_;
  std::int32_t num_slots_ = -1;  // set by the first batch
  std::int64_t records_ = 0;
  std::vector<SlotCounters> slot_counters_;
  KeyIndex index_;
  std::vector<std::int64_t> count_;  // count_[id]: accesses of key id
  std::vector<std::int32_t> slot_;   // slot_[id]: the slot key id belongs to
  ReuseDistanceCounter reuse_;
};

}  // namespace embscale::workloads
