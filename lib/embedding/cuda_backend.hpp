// The embedding layers' use of the GPU, through the device seam (device/device_library.hpp):
// this file and its .cpp include no CUDA header and never load anything themselves; they call
// the functions of a loaded DeviceLibrary and check their sizes before handing pointers over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <utility>

#include "device/device_library.hpp"

namespace embscale::embedding {

class CudaBackend {
 public:
  // Over a loaded library, typically CudaBackend(device::DeviceLibrary::load()).
  explicit CudaBackend(device::DeviceLibrary library) : library_(std::move(library)) {}

  const device::DeviceLibrary& library() const noexcept { return library_; }

  // out[i, :] = table[rows[i], :] computed on the current GPU from host memory (copies in and
  // out, synchronous). table: row-major [num_rows, dim]; out: [rows.size(), dim]. Throws
  // embscale::Error when the sizes disagree, there is no GPU, a CUDA call fails, or an index is
  // outside [0, num_rows) (naming the first such position).
  void gather_rows_host(std::span<const float> table, std::size_t dim,
                        std::span<const std::int64_t> rows, std::span<float> out) const;

 private:
  device::DeviceLibrary library_;
};

}  // namespace embscale::embedding
