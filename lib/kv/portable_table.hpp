// PortableTable: the GPU table. The same bulk calls as HostTable (and so KvTable's, through
// KeyedKvTable), built from the code the GPU kernels run (kv/portable/): a call's keys grouped by
// bucket in input order, each group's keys run one after another by BatchRunner, over the device
// table's layout (keys, scores and digests in their own arrays, probing from a per-key start,
// reserved empty and reclaimed keys: kv/portable/bucket_ref.hpp). Where the arrays live and the
// batches run is its BatchExecutor's (kv/batch_executor.hpp):
//   * PortableTable(options): host memory, one thread, a host tile of the device's width
//     (kv/host_executor.hpp). CI has no GPU: this is where the GPU table's semantics are tested,
//     through the typed conformance suite against the CPU table's reference model
//     (tests/kv/portable_kv_table_test.cpp). It is not a fast CPU table (HostTable is).
//   * DeviceTable(options) (kv/device_table.hpp): a GPU, through libembscale_cuda.so.
//
// Semantics: HostTable's (kv/host_table.hpp), exactly, for every call: a batch as if one key at
// a time in input order (duplicates included), the score rules, placement, admission with one
// bank per bucket, growth before a call that may insert, the reserved keys. What differs is
// only where entries sit: export_batch visits slots in this layout's order. Rows are float32
// (value_type float16 / bfloat16 and rows_directory are refused); with max_hbm_for_rows the rows
// of the buckets past that budget are "far" (hybrid mode: pinned host memory on a GPU, which the
// kernels read and write over the bus; kv/portable/table_ref.hpp's row_of). Calls must not
// overlap (one caller at a time).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include <memory>
#include "core/execution_context.hpp"
#include "kv/admission.hpp"
#include "kv/host_table.hpp"
#include "kv/kv_table.hpp"

#include "kv/batch_executor.hpp"
#include "kv/portable/batch_ref.hpp"
#include "kv/table_options.hpp"

namespace embscale::kv {

// A reserved key (2^64-3 .. 2^64-1) at `position` of a batch already on the device (the
// *_resident calls): the call's other keys were applied and counted first, so the table stays
// consistent; the caller, which can read the batch, names the key.
class ReservedKeyError : public InputError {
 public:
  explicit ReservedKeyError(std::size_t position);
  std::size_t position() const noexcept { return position_; }

 private:
  std::size_t position_;
};

class PortableTable {
 public:
  // On the host (HostExecutor).
  explicit PortableTable(TableOptions options);
  // Where `make_executor` puts it (given the table's geometry).
  using ExecutorFactory = std::function<std::unique_ptr<BatchExecutor>(const TableGeometry&)>;
  PortableTable(TableOptions options, const ExecutorFactory& make_executor);
  virtual ~PortableTable() = default;
  PortableTable(const PortableTable&) = delete;
  PortableTable& operator=(const PortableTable&) = delete;

  const TableOptions& options() const noexcept { return options_; }
  std::int64_t row_width() const noexcept { return row_width_; }
  std::int64_t size() const noexcept { return size_; }
  std::int64_t capacity() const noexcept { return buckets_ * bucket_capacity_; }
  double load_factor() const noexcept { return static_cast<double>(size_) / static_cast<double>(capacity()); }
  std::int64_t buckets() const noexcept { return buckets_; }

  void reserve(std::int64_t capacity);
  void clear();

  // HostTable's calls, with its signatures and meanings.
  CallStats find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                 std::span<std::uint64_t> scores = {}) const;
  CallStats find_and_update(std::span<const std::uint64_t> keys, std::span<float> values,
                            std::span<std::uint8_t> founds);
  void contains(std::span<const std::uint64_t> keys, std::span<std::uint8_t> founds) const;
  CallStats insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores = {});
  CallStats insert_and_evict(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores, Evicted& evicted);
  CallStats find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                           std::span<std::uint8_t> founds = {}, std::span<const std::uint64_t> scores = {},
                           Evicted* evicted = nullptr);
  CallStats assign(std::span<const std::uint64_t> keys, std::span<const float> values);
  CallStats assign_scores(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> scores);
  CallStats accum_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                            std::span<const std::uint8_t> accumulate, std::span<const std::uint64_t> scores = {});
  CallStats restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                    std::span<const std::uint64_t> scores, Evicted* evicted = nullptr);
  CallStats erase(std::span<const std::uint64_t> keys);
  std::int64_t erase_if(const std::function<bool(std::uint64_t key, std::uint64_t score)>& predicate);

  // Calls on a batch already in the table's device memory (a GPU step's; DeviceTable only, the
  // host executor refuses them): `keys` and the rows (keys.size() x row_width) are device memory,
  // the work is queued on the table's stream, and each returns once its outcomes are counted (the
  // rows are ready in stream order). Meanings as the host-memory calls of the same names; a
  // reserved key is a ReservedKeyError.
  CallStats find_or_insert_resident(std::span<const std::uint64_t> keys, float* rows);
  CallStats find_resident(std::span<const std::uint64_t> keys, float* rows) const;
  CallStats assign_resident(std::span<const std::uint64_t> keys, const float* rows);
  // The entries of slots [offset, offset + count) into device memory with room for `count`
  // entries (keys; rows of row_width floats), in slot order; returns their number.
  std::int64_t export_resident(std::int64_t offset, std::int64_t count, std::uint64_t* keys, float* rows) const;

  std::int64_t export_batch(std::int64_t offset, std::int64_t count, std::vector<std::uint64_t>& keys,
                            std::vector<float>& values, std::vector<std::uint64_t>& scores) const;
  std::int64_t export_batch_if(std::uint64_t threshold, std::vector<std::uint64_t>& keys, std::vector<float>& values,
                               std::vector<std::uint64_t>& scores) const;
  // For dump (kv/table_file.hpp), as HostTable::export_stored: rows in the stored form (float32).
  std::int64_t export_stored(std::uint64_t threshold, std::int64_t chunk_entries,
                             const std::function<void(const HostTable::ExportSummary&)>& begin,
                             const std::function<void(const HostTable::StoredEntries&)>& chunk) const;

  std::uint64_t get_score() const;
  void set_score(std::uint64_t score) noexcept { custom_score_ = score; }
  void set_epoch(std::uint32_t epoch) noexcept { epoch_ = epoch; }
  // HostTable::continue_scores's.
  void continue_scores(std::uint64_t score_now);
  // Host contexts only: a call's spans are in host memory (the device executor copies them to
  // and from the GPU); the thread count is not used.
  void set_execution_context(ExecutionContext context);
  const ExecutionContext& execution_context() const noexcept { return context_; }

 private:
  // One call's batch run by the executor: grouped by bucket unless `reads`, the outcomes counted;
  // evicted entries appended in input order when `evicted`. `outcomes` receives each key's
  // outcome bits (kv/portable/batch_ref.hpp). `resident`: the batch is in device memory
  // (BatchExecutor::run_resident).
  CallStats run(portable::BatchRef& batch, const portable::TableState& state, bool reads, Evicted* evicted,
                std::vector<std::uint8_t>& outcomes, bool resident = false) const;
  // A ReservedKeyError for the first reserved key of a resident call's `outcomes`, if any.
  static void refuse_reserved(const std::vector<std::uint8_t>& outcomes);
  // insert_or_assign, and insert_and_evict when `evicted` is given.
  CallStats upsert(std::span<const std::uint64_t> keys, std::span<const float> values,
                   std::span<const std::uint64_t> scores, Evicted* evicted);
  // The state every key of a call reads (the executor adds its arrays and sketch); `sets_scores`:
  // a score-setting call, which reads its call score (the clock, the next step) now, once.
  portable::TableState state(bool sets_scores, const InitializerArgs& initializer) const;
  void grow_for(std::int64_t incoming);
  void resize(std::int64_t buckets);
  std::uint64_t now() const;

  TableOptions options_;
  std::int64_t row_width_ = 0;
  std::int64_t bucket_capacity_ = 0;
  std::int64_t buckets_ = 0;
  std::int64_t size_ = 0;
  TableGeometry geometry_;
  std::unique_ptr<BatchExecutor> executor_;
  mutable std::uint64_t step_ = 0;
  std::uint64_t clock_offset_ = 0;  // continue_scores': added to the clock
  std::uint64_t custom_score_ = 0;
  std::uint32_t epoch_ = 0;
  ExecutionContext context_;
};

}  // namespace embscale::kv
