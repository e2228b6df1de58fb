// DeviceKvRowStore: KvRowStore's dynamic table on a GPU (kv::DeviceTable: the portable table of
// the HierarchicalKV / dynamicemb design, its arrays in the GPU's memory), called with the step's
// keys and rows where they already are, in device memory (the table's *_resident calls), so a
// lookup never crosses the bus. The same calls in the same order as KvRowStore, and the GPU
// table keeps the CPU table's semantics exactly, so both stores hold the same rows after the same
// steps (tests/embedding/device_kv_row_store_test.cpp, on the stand-in library):
//   read:  find_or_insert of the distinct keys into a scratch of full rows (values and optimizer
//          state), then their values gathered into the caller's rows (directly, when a row is
//          only its values: no optimizer state, or evaluation);
//   apply: find of the rows, the optimizer's update of each (embedding_rows apply: the host
//          optimizers' own function), and assign back; a key evicted since its read is not found,
//          and assign skips it, as on the host. A Global update that moves untouched rows
//          (momentum, Nesterov, Adam) then sweeps the table a block of slots at a time: its held
//          entries exported on the device, every one given the untouched update (embedding_rows
//          sweep) and assigned back; the step's own keys are assigned their updated rows last, so
//          they end with the gradient's update alone, as on the host.
// Each table call synchronizes once, to count its outcomes (hits, inserts, evictions) on the host.
//
// Not here: rows stored as fp16/bf16 (the GPU table stores float32 rows), refused before the run by
// the engine (check_dynamic_storage).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "device/device_library.hpp"
#include "device/device_resources.hpp"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/row_store.hpp"
#include "kv/device_table.hpp"

namespace embscale::embedding {

class DeviceKvRowStore final : public RowStore {
 public:
  // `options` complete, as for KvRowStore; `field` the config path of the layer's storage block.
  // The table's calls are queued on `context`'s stream (a device context, its device current).
  // Throws Error when the library lacks the kv_table or embedding_rows family.
  DeviceKvRowStore(const kv::TableOptions& options, std::string field, ExecutionContext context,
                   const device::DeviceLibrary& library);

  std::int32_t dim() const noexcept override { return dim_; }
  std::int32_t state_width() const noexcept override { return state_width_; }
  std::int64_t size() const override { return table_.size(); }
  ExecutionContext execution_context() const override { return context_; }
  void read(std::span<const Key> keys, std::span<float> rows) override;
  void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
             std::int64_t step) override;
  bool row(Key key, std::span<float> out) const override;
  void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const override;
  StoreCounters take_counters() override;
  std::int64_t evicting_capacity() const override { return table_.options().max_capacity; }
  void for_each_evicting_key(const std::function<void(Key)>& visit) const override;
  // The eviction study watches host stores only (the engine refuses it on a GPU).
  void set_access_observer(kv::AccessObserver* observer) override;
  void set_score_clock(std::uint32_t epoch, std::uint64_t score) override {
    table_.set_epoch(epoch);
    table_.set_score(score);
  }

  const kv::TableOptions* table_options() const override { return &table_.options(); }
  void dump_table(const std::filesystem::path& path) const override;
  kv::DumpImage dump_incremental_image(std::uint64_t threshold) const override;
  void continue_scores(std::uint64_t score_now) override { table_.continue_scores(score_now); }
  kv::CallStats restore_entries(std::span<const Key> keys, std::span<const float> rows,
                                std::span<const std::uint64_t> scores) override;

 private:
  // The distinct device `keys` as the table stores them (int64 bits as uint64).
  static std::span<const std::uint64_t> stored(std::span<const Key> keys) noexcept;
  // keys.size() full rows of scratch (device memory).
  float* full_rows(std::size_t keys);
  // 0, 1, ..., n - 1 in device memory: the row of each of n scratch rows for the embedding_rows
  // kernels, which address rows by index.
  const std::int64_t* identity(std::size_t n);
  // The InputError for the reserved key `e` found among the device `keys`, naming it.
  [[noreturn]] void refuse_reserved(std::span<const Key> keys, const kv::ReservedKeyError& e) const;
  // The Global update of every held row but the step's: each block of slots exported on the
  // device, swept, assigned back (the caller then assigns the step's rows over theirs).
  void sweep_untouched(const portable::OptimizerRef& optimizer);
  // Exports every held entry, a block of slots at a time, to `visit` (host memory).
  void for_each_entry(
      const std::function<void(const std::vector<std::uint64_t>& keys, const std::vector<float>& rows)>& visit) const;

  std::string field_;
  std::int32_t dim_;
  std::int32_t state_width_;
  std::size_t row_width_;
  ExecutionContext context_;
  device::DeviceLibrary library_;
  const device::DeviceFunctions* rows_family_;  // embedding_rows: the update and the gather
  kv::DeviceTable table_;
  device::GrowingDeviceBuffer full_rows_;  // keys x row_width floats
  device::GrowingDeviceBuffer identity_;   // int64 0 .. identity_size_ - 1
  std::size_t identity_size_ = 0;
  // The Global sweep's block: exported keys and rows, and the sweep kernel's flags (all zero: every
  // exported row is swept; the kernel leaves them zero).
  device::GrowingDeviceBuffer swept_keys_, swept_rows_, no_flags_;
  std::int64_t no_flags_size_ = 0;
  StoreCounters counters_;
};

}  // namespace embscale::embedding
