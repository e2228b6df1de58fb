// DeviceExecutor: a PortableTable's arrays in GPU memory and its batches run by libembscale_cuda.so's
// kv_table kernel family (device/families/kv_table.h: the grouping by bucket with a radix sort,
// one tile per bucket group, the rehash), through the device seam (lib/device). Every call is
// synchronous for its caller: the batch (host memory) is copied to the device, grouped and run on
// the executor's stream, and its outputs copied back before run() returns.
//
// Exports select on the device (the family's export: a stable selection by score, a gather of
// the chosen slots' keys, scores and rows), a million slots at a time, so only the chosen
// entries cross the bus. Admission banks grow through the host: a grow copies the banks out,
// grows them (grow_sketch_banks) and back (rare next to the batch calls).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "device/device_library.hpp"
#include "device/device_resources.hpp"
#include "kv/batch_executor.hpp"

namespace embscale::kv {

class DeviceExecutor final : public BatchExecutor {
 public:
  // Throws embscale::Error when the library lacks the kv_table family, was built against other
  // structures (embscale_cuda_kv_table_layout), or has no GPU.
  DeviceExecutor(const device::DeviceLibrary& library, const TableGeometry& geometry);
  // The same on `stream` (a stream handle of the library's current GPU, which the caller keeps
  // alive; null: the default stream): every call is queued there, after the caller's own work (a
  // GPU step's stream).
  DeviceExecutor(const device::DeviceLibrary& library, const TableGeometry& geometry, void* stream);

  void resize(std::uint64_t buckets) override;
  void clear() override;
  void run(portable::TableState state, const portable::BatchRef& batch, bool grouped) override;
  void run_resident(portable::TableState state, const portable::BatchRef& batch, bool grouped) override;
  void export_entries(std::uint64_t first, std::uint64_t end, std::uint64_t min_score, std::vector<std::uint64_t>& keys,
                      std::vector<float>& values, std::vector<std::uint64_t>& scores) const override;
  std::uint64_t export_resident(std::uint64_t first, std::uint64_t end, std::uint64_t* keys,
                                float* rows) const override;

 private:
  // Its own stream without `lent`, else the one lent.
  DeviceExecutor(const device::DeviceLibrary& library, const TableGeometry& geometry, std::optional<void*> lent);
  // Hybrid mode's far rows: pinned host memory mapped for the GPU (the kv_table family's
  // host_alloc), freed with its owner. Move-only.
  class PinnedRows {
   public:
    PinnedRows(const device::DeviceLibrary& library, std::uint64_t bytes);
    PinnedRows(PinnedRows&& other) noexcept;
    PinnedRows& operator=(PinnedRows&& other) noexcept;
    PinnedRows(const PinnedRows&) = delete;
    PinnedRows& operator=(const PinnedRows&) = delete;
    ~PinnedRows();
    float* data() const noexcept { return data_; }

   private:
    device::DeviceLibrary library_;
    float* data_ = nullptr;
  };
  // The table's arrays and sketch in device memory (far rows in pinned host memory).
  struct Arrays {
    std::optional<device::DeviceBuffer> keys, scores, digests, rows, counters, sightings;
    std::optional<PinnedRows> far_rows;
  };
  Arrays allocate(std::uint64_t buckets) const;
  portable::TableArrays view(const Arrays& a, std::uint64_t buckets) const noexcept;
  // A device region of at least `bytes` for one call's batch (grown, never shrunk).
  unsigned char* scratch(std::uint64_t bytes) const;  // batches' and exports' (calls never overlap)
  void copy(void* to, const void* from, std::uint64_t bytes) const;
  void set(void* to, int value, std::uint64_t bytes) const;
  void check(int code, const char* what) const;
  void synchronize() const;
  // run and run_resident: `resident` says whether the batch's arrays (but outcomes) are device
  // memory already, or host memory to copy in and out.
  void run_batch(portable::TableState state, const portable::BatchRef& batch, bool grouped, bool resident);

  device::DeviceLibrary library_;
  const device::DeviceFunctions* kernels_;    // library_'s kv_table family
  std::optional<device::Stream> own_stream_;  // absent when the caller lent one
  void* stream_;                              // own_stream_'s handle, or the caller's
  TableGeometry geometry_;
  std::uint64_t buckets_ = 0;
  Arrays arrays_;
  mutable std::optional<device::DeviceBuffer> scratch_;
};

}  // namespace embscale::kv
