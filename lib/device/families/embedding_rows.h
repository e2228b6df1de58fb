/* Kernel family "embedding_rows" of the device seam: a static embedding table's rows on the device
 * (kernels/embedding_rows.cu): look keys up, gather their rows, apply a sparse optimizer to them,
 * the Global update's sweep of the rows a step did not touch, and a replicated table's dense
 * gradient (scatter, then the touched rows selected). The per-key and per-row logic is
 * lib/embedding/portable's (rows_ref.hpp, optimizer_ref.hpp), taken by address as plain data. C
 * only, under the rules of device/device_abi.h. A change to a signature or a meaning bumps
 * EMBSCALE_CUDA_EMBEDDING_ROWS_VERSION, and only it.
 *
 * A table is `num_rows` rows of `row_width` floats, the first `dim` the embedding values, the rest
 * the optimizer's state. Every pointer but `optimizer` and the layout's outputs is device memory;
 * every call is asynchronous on `stream`. */
#ifndef EMBSCALE_DEVICE_FAMILIES_EMBEDDING_ROWS_H
#define EMBSCALE_DEVICE_FAMILIES_EMBEDDING_ROWS_H

#include <stdint.h>

#include "device/device_abi.h"

#define EMBSCALE_CUDA_EMBEDDING_ROWS_VERSION 2

#ifdef __cplusplus
extern "C" {
#endif

/* sizeof(portable::OwnedRange) and sizeof(portable::OptimizerRef) as the library was built:
 * the caller checks them against its own before any call. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_layout(uint64_t* range_bytes, uint64_t* optimizer_bytes);

/* rows[i] = the local row of keys[i] among the `range_count` OwnedRange at `ranges`, for i in
 * [0, n); -1 for a key not owned, and the smallest such i folded (atomic min) into *first_bad,
 * which the caller sets to UINT64_MAX before. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_index(const void* ranges, uint64_t range_count,
                                                            const int64_t* keys, uint64_t n, int64_t* rows,
                                                            uint64_t* first_bad, void* stream);

/* out[i, :] = table[rows[i], 0:dim] for i in [0, n) (every row valid). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_gather(const float* table, uint64_t row_width, uint64_t dim,
                                                             const int64_t* rows, uint64_t n, float* out, void* stream);

/* The optimizer `optimizer` (a host pointer to a portable::OptimizerRef, copied at the call)
 * applied to row rows[i] with gradient grads[i, 0:dim], for i in [0, n): the rows are distinct.
 * With `touched` (else NULL), touched[rows[i]] = 1. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_apply(const void* optimizer, float* table, uint64_t row_width,
                                                            uint64_t dim, const int64_t* rows, const float* grads,
                                                            uint64_t n, uint8_t* touched, void* stream);

/* The Global update of the rows the step did not touch: every row r of [0, num_rows) with
 * touched[r] == 0 takes portable::untouched_row; then touched is all zero again. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_sweep(const void* optimizer, float* table, uint64_t row_width,
                                                            uint64_t dim, uint64_t num_rows, uint8_t* touched,
                                                            void* stream);

/* The same three on a table of 16-bit values (fp16, or bf16 when `bfloat`): row r is `row_width`
 * values at table + r x row_width, decoded to float and encoded back with
 * portable/row_codec_ref.hpp. apply and sweep update a decoded copy of each row in `scratch`
 * (device memory: n x row_width floats for apply, count x row_width for sweep); sweep covers the
 * rows [first, first + count). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_gather16(const uint16_t* table, int bfloat, uint64_t row_width,
                                                               uint64_t dim, const int64_t* rows, uint64_t n,
                                                               float* out, void* stream);
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_apply16(const void* optimizer, uint16_t* table, int bfloat,
                                                              uint64_t row_width, uint64_t dim, const int64_t* rows,
                                                              const float* grads, uint64_t n, uint8_t* touched,
                                                              float* scratch, void* stream);
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_sweep16(const void* optimizer, uint16_t* table, int bfloat,
                                                              uint64_t row_width, uint64_t dim, uint64_t first,
                                                              uint64_t count, uint8_t* touched, float* scratch,
                                                              void* stream);

/* A replicated table's gradient (TorchRec's data-parallel): for each of the n distinct `keys`
 * (owned, among the `range_count` OwnedRange at `ranges`), grad_table[its row, :] = 0 + grads[i, :]
 * and touched[its row] = 1; the caller zeroes both first. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_scatter(const void* ranges, uint64_t range_count,
                                                              const int64_t* keys, uint64_t n, const float* grads,
                                                              uint64_t dim, float* grad_table, int32_t* touched,
                                                              void* stream);
/* The rows of [0, num_rows) with touched != 0, in row order: their keys into keys[0, *count) and
 * their gradients (grad_table's rows) into grads; `scratch` holds at least
 * embedding_rows_select_scratch's bytes for num_rows. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_select_scratch(uint64_t num_rows, uint64_t* bytes);
EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_select(const void* ranges, uint64_t range_count,
                                                             const int32_t* touched, const float* grad_table,
                                                             uint64_t dim, uint64_t num_rows, int64_t* keys,
                                                             float* grads, uint64_t* count, void* scratch,
                                                             void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The family's functions, named without the embscale_cuda_ prefix (device/kernel_families.h). */
#define EMBSCALE_CUDA_EMBEDDING_ROWS_FUNCTIONS(X) \
  X(embedding_rows_layout)                        \
  X(embedding_rows_index)                         \
  X(embedding_rows_gather)                        \
  X(embedding_rows_apply)                         \
  X(embedding_rows_sweep)                         \
  X(embedding_rows_gather16)                      \
  X(embedding_rows_apply16)                       \
  X(embedding_rows_sweep16)                       \
  X(embedding_rows_scatter)                       \
  X(embedding_rows_select_scratch)                \
  X(embedding_rows_select)

#endif /* EMBSCALE_DEVICE_FAMILIES_EMBEDDING_ROWS_H */
