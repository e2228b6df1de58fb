/* Kernel family "row_gather" of the device seam: the owner's row gather
 * out[i, :] = table[rows[i], :] (kernels/row_gather.cu). C only, under the rules of
 * device/device_abi.h (codes, per-thread detail, streams as void*). A change to a signature or a
 * meaning here bumps EMBSCALE_CUDA_ROW_GATHER_VERSION, and only it. */
#ifndef EMBSCALE_DEVICE_FAMILIES_ROW_GATHER_H
#define EMBSCALE_DEVICE_FAMILIES_ROW_GATHER_H

#include <stdint.h>

#include "device/device_abi.h"

#define EMBSCALE_CUDA_ROW_GATHER_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* Row gather on the current device: d_out[i, :] = d_table[d_rows[i], :] for i in [0, n).
 * d_table: row-major [num_rows, dim] floats; d_rows: n int64 row indices; d_out: [n, dim]
 * (must not overlap d_table). All three are device pointers. Moves 16-byte vectors when dim is a
 * multiple of 4 and d_table and d_out are 16-byte aligned (8-byte ones for even dim).
 *
 * An index outside [0, num_rows) is never read: its output row is zero-filled and the call
 * returns EMBSCALE_CUDA_BAD_INDEX, naming the first such position in the detail. To know that it
 * synchronizes `stream` before returning. n == 0 returns EMBSCALE_CUDA_OK and launches nothing. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows(const float* d_table, int64_t num_rows, int64_t dim,
                                                   const int64_t* d_rows, int64_t n, float* d_out, void* stream);

/* The same gather, asynchronous: enqueues the kernel on `stream` and returns. The smallest
 * position i whose index is out of range is folded (atomic min) into *d_first_bad, a device
 * uint64 that the caller sets to UINT64_MAX (all bytes 0xff) beforehand and reads after
 * synchronizing; it stays UINT64_MAX when every index was valid. Returns an error only for
 * invalid arguments or a failed launch. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_async(const float* d_table, int64_t num_rows, int64_t dim,
                                                         const int64_t* d_rows, int64_t n, float* d_out,
                                                         uint64_t* d_first_bad, void* stream);

/* Host convenience: copies table and rows (host memory) to the current device, runs
 * embscale_cuda_gather_rows, copies the [n, dim] result into out (host memory) and frees the
 * device buffers; synchronous. On EMBSCALE_CUDA_BAD_INDEX, out holds the rows gathered for the
 * valid indices and zeros for the others. n == 0 returns EMBSCALE_CUDA_OK without touching
 * the device. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_host(const float* table, int64_t num_rows, int64_t dim,
                                                        const int64_t* rows, int64_t n, float* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The family's functions, named without the embscale_cuda_ prefix (device/kernel_families.h). */
#define EMBSCALE_CUDA_ROW_GATHER_FUNCTIONS(X) \
  X(gather_rows)                              \
  X(gather_rows_async)                        \
  X(gather_rows_host)

#endif /* EMBSCALE_DEVICE_FAMILIES_ROW_GATHER_H */
