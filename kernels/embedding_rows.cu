// libembscale_cuda.so: a static embedding table's rows on the device, the embedding_rows family
// (device/families/embedding_rows.h). The logic is lib/embedding/portable's: row_of for the
// lookup, optimizer_ref.hpp's updates (the host optimizers' own functions, so a row ends with the
// CPU table's bits). One thread per key for the lookup; for the gather and the updates, a row's
// threads over its values (row_grid.cuh), a row's update split into optimizer_ref.hpp's prologue,
// per-value update and epilogue (a batch's rows are distinct: no two rows share their threads' writes).
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <cstdint>
#include <cstring>
#include <string>

#include "abi_boundary.hpp"
#include "device/families/embedding_rows.h"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/portable/row_codec_ref.hpp"
#include "embedding/portable/rows_ref.hpp"
#include "row_grid.cuh"

namespace {

namespace portable = embscale::embedding::portable;
using embscale::cuda::cuda_fail;
using embscale::cuda::fail;
using embscale::cuda::guarded;
using embscale::cuda::row_grid;

constexpr int kBlock = 256;
// The updates' rows each within one warp (their threads meet at __syncwarp).
constexpr unsigned kRowThreadsInOneWarp = 32;

// Blocks of kBlock threads for n threads; 0 when they exceed one launch's grid (2^31 - 1 blocks).
unsigned blocks_for(std::uint64_t n) {
  const std::uint64_t blocks = (n + kBlock - 1) / kBlock;
  return blocks > 0x7fffffffULL ? 0u : static_cast<unsigned>(blocks);
}

int too_large(std::uint64_t n) {
  return fail(
      EMBSCALE_CUDA_INVALID_ARGUMENT,
      std::to_string(n) + " threads exceed one launch's grid (2^31 - 1 blocks of " + std::to_string(kBlock) + ")");
}

__global__ void index_kernel(const portable::OwnedRange* ranges, std::uint64_t count, const std::int64_t* keys,
                             std::uint64_t n, std::int64_t* rows, unsigned long long* first_bad) {
  const std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  const std::int64_t row = portable::row_of(ranges, count, keys[i]);
  rows[i] = row;
  if (row < 0) atomicMin(first_bad, static_cast<unsigned long long>(i));
}

__global__ void gather_kernel(const float* table, std::uint64_t row_width, std::uint64_t dim, const std::int64_t* rows,
                              std::uint64_t n, float* out) {
  EMBSCALE_FOR_ROWS(i, n) {
    const float* row = table + static_cast<std::uint64_t>(rows[i]) * row_width;
    EMBSCALE_FOR_VALUES(c, dim) out[i * dim + c] = row[c];
  }
}

// The updates: a row's threads lie in one warp (row_grid with at most 32 threads over a row), so
// they meet at __syncwarp: every thread reads the row's per-row state (row_prologue) before one
// stores the new (row_epilogue). The loops run per block of rows (`first` is the block's), so every
// thread of a warp runs the same iterations and reaches each __syncwarp.
#define EMBSCALE_FOR_ROW_BLOCKS(first, rows)                                                      \
  for (std::uint64_t first = blockIdx.x * static_cast<std::uint64_t>(blockDim.y); first < (rows); \
       first += static_cast<std::uint64_t>(gridDim.x) * blockDim.y)

// A touched row's update by its threads (`active`: the thread's row is one of the batch's): each
// reads the row's per-row state and updates its values, then, after every thread of the row has
// read that state, one stores it and sets the row's flag (`flag`, null: none).
__device__ void update_by_row_threads(const portable::OptimizerRef& optimizer, bool active, float* row, const float* g,
                                      std::uint64_t dim, std::uint8_t* flag) {
  portable::RowPrologue p;
  if (active) {
    p = portable::row_prologue(optimizer, row + dim, g, dim);
    EMBSCALE_FOR_VALUES(c, dim) portable::update_value(optimizer, p, row, row + dim, g, dim, c);
  }
  __syncwarp();
  if (active && threadIdx.x == 0) {
    portable::row_epilogue(optimizer, p, row + dim, dim);
    if (flag != nullptr) *flag = 1;
  }
}

__global__ void apply_kernel(portable::OptimizerRef optimizer, float* table, std::uint64_t row_width, std::uint64_t dim,
                             const std::int64_t* rows, const float* grads, std::uint64_t n, std::uint8_t* touched) {
  EMBSCALE_FOR_ROW_BLOCKS(first, n) {
    const std::uint64_t i = first + threadIdx.y;
    const bool active = i < n;
    float* row = active ? table + static_cast<std::uint64_t>(rows[i]) * row_width : nullptr;
    std::uint8_t* flag = active && touched != nullptr ? touched + rows[i] : nullptr;
    update_by_row_threads(optimizer, active, row, grads + i * dim, dim, flag);
  }
}

__global__ void sweep_kernel(portable::OptimizerRef optimizer, float* table, std::uint64_t row_width, std::uint64_t dim,
                             std::uint64_t num_rows, std::uint8_t* touched) {
  EMBSCALE_FOR_ROW_BLOCKS(first, num_rows) {
    const std::uint64_t r = first + threadIdx.y;
    const bool active = r < num_rows;
    if (active && touched[r] == 0) {
      float* row = table + r * row_width;
      EMBSCALE_FOR_VALUES(c, dim) portable::untouched_value(optimizer, row, row + dim, dim, c);
    }
    __syncwarp();  // every thread of the row has read its flag
    if (active && threadIdx.x == 0) touched[r] = 0;
  }
}

// ---- 16-bit rows: decoded into a float copy, updated, encoded back ----

__global__ void gather16_kernel(const std::uint16_t* table, int bfloat, std::uint64_t row_width, std::uint64_t dim,
                                const std::int64_t* rows, std::uint64_t n, float* out) {
  EMBSCALE_FOR_ROWS(i, n) {
    const std::uint16_t* row = table + static_cast<std::uint64_t>(rows[i]) * row_width;
    EMBSCALE_FOR_VALUES(c, dim) out[i * dim + c] = portable::decode16(row[c], bfloat != 0);
  }
}

// A 16-bit row through its float copy: decoded (the row's threads, every value), updated by
// `update` once every value is decoded, encoded back once every value is updated.
template <class Update>
__device__ void through_float_row(bool active, std::uint16_t* stored, int bfloat, std::uint64_t row_width, float* row,
                                  Update&& update) {
  if (active) EMBSCALE_FOR_VALUES(c, row_width) row[c] = portable::decode16(stored[c], bfloat != 0);
  __syncwarp();
  update();
  __syncwarp();
  if (active) EMBSCALE_FOR_VALUES(c, row_width) stored[c] = portable::encode16(row[c], bfloat != 0);
}

__global__ void apply16_kernel(portable::OptimizerRef optimizer, std::uint16_t* table, int bfloat,
                               std::uint64_t row_width, std::uint64_t dim, const std::int64_t* rows, const float* grads,
                               std::uint64_t n, std::uint8_t* touched, float* scratch) {
  EMBSCALE_FOR_ROW_BLOCKS(first, n) {
    const std::uint64_t i = first + threadIdx.y;
    const bool active = i < n;
    std::uint16_t* stored = active ? table + static_cast<std::uint64_t>(rows[i]) * row_width : nullptr;
    float* row = scratch + i * row_width;
    const float* g = grads + i * dim;
    std::uint8_t* flag = active && touched != nullptr ? touched + rows[i] : nullptr;
    through_float_row(active, stored, bfloat, row_width, row,
                      [&] { update_by_row_threads(optimizer, active, row, g, dim, flag); });
  }
}

__global__ void sweep16_kernel(portable::OptimizerRef optimizer, std::uint16_t* table, int bfloat,
                               std::uint64_t row_width, std::uint64_t dim, std::uint64_t first_row, std::uint64_t count,
                               std::uint8_t* touched, float* scratch) {
  EMBSCALE_FOR_ROW_BLOCKS(first, count) {
    const std::uint64_t t = first + threadIdx.y, r = first_row + t;
    const bool moves = t < count && touched[r] == 0;
    float* row = scratch + t * row_width;
    through_float_row(moves, table + r * row_width, bfloat, row_width, row, [&] {
      if (moves) EMBSCALE_FOR_VALUES(c, dim) portable::untouched_value(optimizer, row, row + dim, dim, c);
    });  // its __syncwarp()s: every thread of the row has read its flag
    if (t < count && threadIdx.x == 0) touched[r] = 0;
  }
}

// ---- a replicated table's gradient ----

__global__ void scatter_kernel(const portable::OwnedRange* ranges, std::uint64_t count, const std::int64_t* keys,
                               std::uint64_t n, const float* grads, std::uint64_t dim, float* grad_table,
                               std::int32_t* touched) {
  EMBSCALE_FOR_ROWS(i, n) {
    const std::int64_t row = portable::row_of(ranges, count, keys[i]);
    if (row < 0) continue;  // not owned: nothing (a replica owns every key of the layer)
    EMBSCALE_FOR_VALUES(c, dim)
    grad_table[static_cast<std::uint64_t>(row) * dim + c] = __fadd_rn(0.0f, grads[i * dim + c]);
    if (threadIdx.x == 0) touched[row] = 1;
  }
}

__global__ void iota_kernel(std::int64_t* rows, std::uint64_t n) {
  const std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (i < n) rows[i] = static_cast<std::int64_t>(i);
}

// The selected rows (in row order, `selected` of them on the device) into keys and gradients.
__global__ void selected_rows_kernel(const portable::OwnedRange* ranges, std::uint64_t range_count,
                                     const std::int64_t* rows, const unsigned long long* selected,
                                     const float* grad_table, std::uint64_t dim, std::uint64_t num_rows,
                                     std::int64_t* keys, float* grads) {
  const std::uint64_t e = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  if (e >= num_rows * dim) return;
  const std::uint64_t i = e / dim, d = e % dim;
  if (i >= *selected) return;
  const std::int64_t row = rows[i];
  grads[e] = grad_table[static_cast<std::uint64_t>(row) * dim + d];
  if (d == 0) keys[i] = portable::key_of(ranges, range_count, row);
}

int launched(const char* kernel) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail(kernel, err);
}

portable::OptimizerRef copied(const void* optimizer) {
  portable::OptimizerRef o;
  std::memcpy(&o, optimizer, sizeof o);
  return o;
}

}  // namespace

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_layout(uint64_t* range_bytes, uint64_t* optimizer_bytes) {
  return guarded([&]() -> int {
    if (!range_bytes || !optimizer_bytes) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
    *range_bytes = sizeof(portable::OwnedRange);
    *optimizer_bytes = sizeof(portable::OptimizerRef);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_index(const void* ranges, uint64_t range_count,
                                                            const int64_t* keys, uint64_t n, int64_t* rows,
                                                            uint64_t* first_bad, void* stream) {
  return guarded([&]() -> int {
    if (n == 0) return EMBSCALE_CUDA_OK;
    if (!keys || !rows || !first_bad || (range_count > 0 && !ranges))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
    if (blocks_for(n) == 0) return too_large(n);
    index_kernel<<<blocks_for(n), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const portable::OwnedRange*>(ranges), range_count, keys, n, rows,
        reinterpret_cast<unsigned long long*>(first_bad));
    return launched("embedding_rows index_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_gather(const float* table, uint64_t row_width, uint64_t dim,
                                                             const int64_t* rows, uint64_t n, float* out,
                                                             void* stream) {
  return guarded([&]() -> int {
    if (n == 0 || dim == 0) return EMBSCALE_CUDA_OK;
    if (!table || !rows || !out || dim > row_width)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer or dim > row_width");
    const auto shape = row_grid(n, dim);
    gather_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(table, row_width, dim, rows, n,
                                                                                     out);
    return launched("embedding_rows gather_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_apply(const void* optimizer, float* table, uint64_t row_width,
                                                            uint64_t dim, const int64_t* rows, const float* grads,
                                                            uint64_t n, uint8_t* touched, void* stream) {
  return guarded([&]() -> int {
    if (n == 0) return EMBSCALE_CUDA_OK;
    if (!optimizer || !table || !rows || !grads || dim > row_width)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer or dim > row_width");
    const auto shape = row_grid(n, dim, kRowThreadsInOneWarp);
    apply_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(copied(optimizer), table, row_width,
                                                                                    dim, rows, grads, n, touched);
    return launched("embedding_rows apply_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_sweep(const void* optimizer, float* table, uint64_t row_width,
                                                            uint64_t dim, uint64_t num_rows, uint8_t* touched,
                                                            void* stream) {
  return guarded([&]() -> int {
    if (num_rows == 0) return EMBSCALE_CUDA_OK;
    if (!optimizer || !table || !touched || dim > row_width)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer or dim > row_width");
    const auto shape = row_grid(num_rows, dim, kRowThreadsInOneWarp);
    sweep_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(copied(optimizer), table, row_width,
                                                                                    dim, num_rows, touched);
    return launched("embedding_rows sweep_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_gather16(const uint16_t* table, int bfloat, uint64_t row_width,
                                                               uint64_t dim, const int64_t* rows, uint64_t n,
                                                               float* out, void* stream) {
  return guarded([&]() -> int {
    if (n == 0 || dim == 0) return EMBSCALE_CUDA_OK;
    if (!table || !rows || !out || dim > row_width)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer or dim > row_width");
    const auto shape = row_grid(n, dim);
    gather16_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(table, bfloat, row_width, dim,
                                                                                       rows, n, out);
    return launched("embedding_rows gather16_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_apply16(const void* optimizer, uint16_t* table, int bfloat,
                                                              uint64_t row_width, uint64_t dim, const int64_t* rows,
                                                              const float* grads, uint64_t n, uint8_t* touched,
                                                              float* scratch, void* stream) {
  return guarded([&]() -> int {
    if (n == 0) return EMBSCALE_CUDA_OK;
    if (!optimizer || !table || !rows || !grads || !scratch || dim > row_width)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer or dim > row_width");
    const auto shape = row_grid(n, row_width, kRowThreadsInOneWarp);
    apply16_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(
        copied(optimizer), table, bfloat, row_width, dim, rows, grads, n, touched, scratch);
    return launched("embedding_rows apply16_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_sweep16(const void* optimizer, uint16_t* table, int bfloat,
                                                              uint64_t row_width, uint64_t dim, uint64_t first,
                                                              uint64_t count, uint8_t* touched, float* scratch,
                                                              void* stream) {
  return guarded([&]() -> int {
    if (count == 0) return EMBSCALE_CUDA_OK;
    if (!optimizer || !table || !touched || !scratch || dim > row_width)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer or dim > row_width");
    const auto shape = row_grid(count, row_width, kRowThreadsInOneWarp);
    sweep16_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(
        copied(optimizer), table, bfloat, row_width, dim, first, count, touched, scratch);
    return launched("embedding_rows sweep16_kernel");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_scatter(const void* ranges, uint64_t range_count,
                                                              const int64_t* keys, uint64_t n, const float* grads,
                                                              uint64_t dim, float* grad_table, int32_t* touched,
                                                              void* stream) {
  return guarded([&]() -> int {
    if (n == 0 || dim == 0) return EMBSCALE_CUDA_OK;
    if (!ranges || !keys || !grads || !grad_table || !touched)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_rows_scatter: a null pointer");
    const auto shape = row_grid(n, dim);
    scatter_kernel<<<shape.grid, shape.block, 0, static_cast<cudaStream_t>(stream)>>>(
        static_cast<const portable::OwnedRange*>(ranges), range_count, keys, n, grads, dim, grad_table, touched);
    return launched("embedding_rows scatter_kernel");
  });
}

// Scratch: the row numbers (iota), the selected ones, the selected count, CUB's temporary bytes.
namespace {
struct SelectScratch {
  std::int64_t *rows = nullptr, *selected = nullptr;
  unsigned long long* count = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  std::uint64_t used = 0;
  cudaError_t error = cudaSuccess;
  SelectScratch(void* base, std::uint64_t n) {
    error = cub::DeviceSelect::Flagged(nullptr, temp_bytes, static_cast<const std::int64_t*>(nullptr),
                                       static_cast<const std::int32_t*>(nullptr), static_cast<std::int64_t*>(nullptr),
                                       static_cast<unsigned long long*>(nullptr), static_cast<int>(n));
    auto* at = static_cast<char*>(base);
    const auto take = [&](std::uint64_t bytes) {
      char* p = at ? at + used : nullptr;
      used += (bytes + 255) / 256 * 256;
      return p;
    };
    rows = reinterpret_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
    selected = reinterpret_cast<std::int64_t*>(take(n * sizeof(std::int64_t)));
    count = reinterpret_cast<unsigned long long*>(take(sizeof(unsigned long long)));
    temp = take(temp_bytes);
  }
};
}  // namespace

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_select_scratch(uint64_t num_rows, uint64_t* bytes) {
  return guarded([&]() -> int {
    if (!bytes) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes is NULL");
    if (num_rows > 0x7fffffffULL) return too_large(num_rows);
    const SelectScratch s(nullptr, num_rows);
    if (s.error != cudaSuccess) return cuda_fail("sizing CUB's temporary storage", s.error);
    *bytes = s.used;
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_select(const void* ranges, uint64_t range_count,
                                                             const int32_t* touched, const float* grad_table,
                                                             uint64_t dim, uint64_t num_rows, int64_t* keys,
                                                             float* grads, uint64_t* count, void* scratch,
                                                             void* stream) {
  return guarded([&]() -> int {
    if (!count) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "count is NULL");
    const auto s = static_cast<cudaStream_t>(stream);
    if (num_rows == 0) {
      const cudaError_t err = cudaMemsetAsync(count, 0, sizeof(std::uint64_t), s);
      return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail("an empty selection", err);
    }
    if (!ranges || !touched || !grad_table || !keys || !grads || !scratch)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_rows_select: a null pointer");
    if (num_rows > 0x7fffffffULL || blocks_for(num_rows * dim) == 0) return too_large(num_rows);
    SelectScratch q(scratch, num_rows);
    iota_kernel<<<blocks_for(num_rows), kBlock, 0, s>>>(q.rows, num_rows);
    if (const int code = launched("embedding_rows iota_kernel"); code != EMBSCALE_CUDA_OK) return code;
    cudaError_t err = cub::DeviceSelect::Flagged(q.temp, q.temp_bytes, q.rows, touched, q.selected, q.count,
                                                 static_cast<int>(num_rows), s);
    if (err != cudaSuccess) return cuda_fail("selecting the touched rows", err);
    selected_rows_kernel<<<blocks_for(num_rows * dim), kBlock, 0, s>>>(static_cast<const portable::OwnedRange*>(ranges),
                                                                       range_count, q.selected, q.count, grad_table,
                                                                       dim, num_rows, keys, grads);
    if (const int code = launched("embedding_rows selected_rows_kernel"); code != EMBSCALE_CUDA_OK) return code;
    err = cudaMemcpyAsync(count, q.count, sizeof(std::uint64_t), cudaMemcpyDeviceToDevice, s);
    return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail("the selected count", err);
  });
}

}  // extern "C"
