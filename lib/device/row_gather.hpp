// The row gather family (device/families/row_gather.h) from C++: sizes checked, then the
// library's kernels called and their code turned into embscale::Error. Used by the GPU checks
// and, with a device table, by the owners' lookup.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "device/device_library.hpp"

namespace embscale::device {

// out[i, :] = table[rows[i], :] computed on the current GPU from host memory (copies in and
// out, synchronous). table: row-major [num_rows, dim]; out: [rows.size(), dim]. Throws
// embscale::Error when the sizes disagree, the library lacks the family, there is no GPU, a CUDA
// call fails, or an index is outside [0, num_rows) (naming the first such position).
void gather_rows_host(const DeviceLibrary& library, std::span<const float> table, std::size_t dim,
                      std::span<const std::int64_t> rows, std::span<float> out);

}  // namespace embscale::device
