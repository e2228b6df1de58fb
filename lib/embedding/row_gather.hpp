// The owner's row gather: out[i, :] = table[rows[i], :]. Header-only and free of MPI so the
// standalone GPU test can use it as the CPU reference for the CUDA kernel (kernels/).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>

namespace embscale {

// table: row-major [num_rows, dim]; rows: indices into it (each < num_rows, checked by caller);
// out: [rows.size(), dim].
inline void gather_rows(const float* table, std::size_t dim, std::span<const std::int64_t> rows, float* out) noexcept {
  for (std::size_t i = 0; i < rows.size(); ++i)
    std::memcpy(out + i * dim, table + static_cast<std::size_t>(rows[i]) * dim, dim * sizeof(float));
}

}  // namespace embscale
