// DeviceStaticRowStore: StaticRowStore's table in a GPU's memory (a row for every key a rank
// owns, from the start), read and updated by the embedding_rows kernel family through lib/device.
// Its rows start from StaticRowStore's initial rows and its updates run the host optimizers' own
// functions (embedding/portable/optimizer_ref.hpp), so both stores hold the same bits after the
// same calls (tests/embedding/device_static_row_store_test.cpp, on the stand-in library; on a GPU,
// tests/gpu/embedding_rows_gpu_test.cu holds the kernels to the host), but for LazyGlobal Adam,
// within one float ulp on a GPU (optimizer_ref.hpp says why).
//
// A device store: the spans of read and apply are device memory, every call is queued on the
// context's stream. read and apply synchronize once, to learn whether every key was owned (a
// foreign key is an Error naming it, as on the host). Rows are stored as the table's
// storage.embedding_dtype says: fp32, or fp16/bf16 decoded to float for each gather and update and
// rounded back (portable/row_codec_ref.hpp, the host table's codec).
#pragma once

#include <cstdint>
#include <vector>

#include "device/device_library.hpp"
#include "device/device_resources.hpp"
#include "embedding/owned_keys.hpp"
#include "embedding/row_store.hpp"
#include "kv/table_options.hpp"

namespace embscale::embedding {

class DeviceStaticRowStore final : public RowStore {
 public:
  // As StaticRowStore's constructor, on `context` (a device context: its device current, its
  // stream). Throws Error when the library lacks the embedding_rows family or was built with other
  // layouts.
  DeviceStaticRowStore(OwnedKeys owned, const kv::TableOptions& options, std::int32_t column_first,
                       std::int32_t full_dim, ExecutionContext context, const device::DeviceLibrary& library);

  std::int32_t dim() const noexcept override { return dim_; }
  std::int32_t state_width() const noexcept override { return state_width_; }
  std::int64_t size() const override { return owned_.rows(); }
  ExecutionContext execution_context() const override { return context_; }
  void read(std::span<const Key> keys, std::span<float> rows) override;
  void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
             std::int64_t step) override;
  bool row(Key key, std::span<float> out) const override;
  void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const override;
  StoreCounters take_counters() override;

 private:
  // The table's bytes, once what it cannot hold is refused (before any allocation).
  static std::int64_t checked_table_bytes(const OwnedKeys& owned, const kv::TableOptions& options,
                                          const ExecutionContext& context, const device::DeviceLibrary& library);
  // The rows of the device `keys` into rows_ (grown to keys.size()); an Error naming the first key
  // not owned here (one synchronization: the index kernel's verdict).
  const std::int64_t* index(std::span<const Key> keys);

  static constexpr std::int64_t kBlockRows = 1 << 16;  // the rows of one upload, download or 16-bit sweep
  bool sixteen_bits() const noexcept { return type_ != kv::ValueType::kFloat32; }
  int bfloat() const noexcept { return type_ == kv::ValueType::kBFloat16 ? 1 : 0; }
  // Row r's first stored byte on the device.
  void* stored_row(std::int64_t r) const noexcept {
    return static_cast<std::byte*>(table_.data()) + static_cast<std::size_t>(r) * row_width_ * value_bytes_;
  }

  OwnedKeys owned_;
  std::int32_t dim_;
  kv::ValueType type_;
  std::size_t value_bytes_;  // 4, or 2 for fp16 and bf16
  std::int32_t state_width_;
  std::size_t row_width_;
  ExecutionContext context_;
  device::DeviceLibrary library_;
  const device::DeviceFunctions* rows_family_;  // the embedding_rows family, checked once
  device::DeviceBuffer table_;                  // owned_.rows() x row_width_ values of type_
  device::DeviceBuffer ranges_;                 // the owned ranges (portable::OwnedRange)
  std::uint64_t range_count_ = 0;
  device::DeviceBuffer first_bad_;       // the index kernel's verdict (one uint64)
  device::GrowingDeviceBuffer rows_;     // a batch's rows (int64 each)
  device::GrowingDeviceBuffer touched_;  // the Global sweep's flags, one byte per row
  device::GrowingDeviceBuffer scratch_;  // 16-bit rows: the decoded copies an update changes
  bool touched_clean_ = false;           // all zero (a sweep that completed clears them; a failure does not)
  std::int64_t reads_ = 0;
};

}  // namespace embscale::embedding
