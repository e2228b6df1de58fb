// Where a PortableTable's arrays live and its batch calls run (kv/portable_table.hpp): host
// memory and one thread (HostExecutor, kv/host_executor.hpp: the GPU table's logic tested without
// a GPU), or a GPU through libembscale_cuda.so's kv_table kernel family (DeviceExecutor,
// kv/device_executor.hpp). Both run the same portable code (kv/portable/batch_ref.hpp); the table
// above them decides what a call does (key checks, growth, call scores, counts, evicted order).
#pragma once

#include <cstdint>
#include <vector>

#include "core/error.hpp"
#include "kv/portable/batch_ref.hpp"

namespace embscale::kv {

// A table's geometry, fixed at its creation.
struct TableGeometry {
  std::uint32_t bucket_capacity = 0;
  std::uint32_t row_width = 0;
  portable::SketchRef sketch;  // the admission sketch's parameters, arrays not set
  portable::FilterKind filter = portable::FilterKind::kNone;
  std::int64_t max_hbm_for_rows = 0;  // TableOptions': 0, every row near

  // Of `buckets` buckets, the slots whose rows are near (device memory): whole buckets within
  // max_hbm_for_rows, all of them without a budget. The others' rows are far (hybrid mode).
  std::uint64_t near_slots(std::uint64_t buckets) const noexcept {
    const std::uint64_t bucket_bytes = std::uint64_t{bucket_capacity} * row_width * sizeof(float);
    if (max_hbm_for_rows == 0 || bucket_bytes == 0) return buckets * bucket_capacity;
    const std::uint64_t near_buckets = static_cast<std::uint64_t>(max_hbm_for_rows) / bucket_bytes;
    return (near_buckets < buckets ? near_buckets : buckets) * bucket_capacity;
  }
};

class BatchExecutor {
 public:
  virtual ~BatchExecutor() = default;

  // The table now has `buckets` buckets (a power of two): on the first call an empty table, later
  // a rehash into more, every entry kept and each new admission bank a copy of its parent's.
  virtual void resize(std::uint64_t buckets) = 0;
  // Every slot empty, every admission counter zero.
  virtual void clear() = 0;
  // One call's batch. `state`: the call's scores, filter and initializer (its state values in host
  // memory), without arrays or sketch: the executor puts in its own. `batch`: host memory, inputs
  // read and outputs (rows_out, scores_out, outcomes, the evicted arrays, each where not null)
  // written when run returns; grouped by bucket when `grouped` (order and offsets are the
  // executor's to compute), else one key per group (reads).
  virtual void run(portable::TableState state, const portable::BatchRef& batch, bool grouped) = 0;
  // The same call on a batch already in the executor's device memory (a GPU step's keys and rows):
  // every array of `batch` but `outcomes` is device memory, queued on the executor's stream after
  // the work already there; `outcomes` (host memory) is written when it returns, the outputs
  // when the stream reaches them. No evicted arrays. An executor without device memory (the host
  // executor) refuses it.
  virtual void run_resident(portable::TableState state, const portable::BatchRef& batch, bool grouped);
  // The entries of slots [first, end) (every score), in slot order, into device memory with room
  // for end - first entries: keys and rows (row_width floats each), queued on the executor's
  // stream; returns their number (a synchronization). Refused where run_resident is.
  virtual std::uint64_t export_resident(std::uint64_t first, std::uint64_t end, std::uint64_t* keys, float* rows) const;
  // The entries of slots [first, end) whose score is >= min_score, in slot order; the vectors are
  // replaced.
  virtual void export_entries(std::uint64_t first, std::uint64_t end, std::uint64_t min_score,
                              std::vector<std::uint64_t>& keys, std::vector<float>& values,
                              std::vector<std::uint64_t>& scores) const = 0;
};

inline void BatchExecutor::run_resident(portable::TableState, const portable::BatchRef&, bool) {
  throw Error("this KV table keeps its arrays in host memory: it takes no batch in device memory");
}

inline std::uint64_t BatchExecutor::export_resident(std::uint64_t, std::uint64_t, std::uint64_t*, float*) const {
  throw Error("this KV table keeps its arrays in host memory: it exports into no device memory");
}

}  // namespace embscale::kv
