/* Kernel family "kv_table" of the device seam: the GPU dynamic embedding table's batch calls
 * (kernels/kv_table.cu), which run the table logic written once for host and device in
 * lib/kv/portable/. C only, under the rules of device/device_abi.h (codes, per-thread detail,
 * streams as void*).
 *
 * A call's structures are the portable code's own, passed by address from host memory (their
 * pointers are device pointers): `arrays` a kv::portable::TableArrays, `state` a
 * kv::portable::TableState, `batch` a kv::portable::BatchRef (lib/kv/portable/batch_ref.hpp).
 * Both sides compile that header; embscale_cuda_kv_table_layout lets a caller check that they
 * agree on its sizes. A change to those structures or to a signature here bumps
 * EMBSCALE_CUDA_KV_TABLE_VERSION, and only it.
 *
 * Every call is asynchronous on `stream`: it validates its arguments, enqueues its kernels and
 * returns; a failed launch is EMBSCALE_CUDA_CUDA_ERROR. */
#ifndef EMBSCALE_DEVICE_FAMILIES_KV_TABLE_H
#define EMBSCALE_DEVICE_FAMILIES_KV_TABLE_H

#include <stdint.h>

#include "device/device_abi.h"

#define EMBSCALE_CUDA_KV_TABLE_VERSION 1

#ifdef __cplusplus
extern "C" {
#endif

/* The library's sizes of TableArrays, TableState and BatchRef. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_layout(uint64_t* arrays_bytes, uint64_t* state_bytes,
                                                       uint64_t* batch_bytes);

/* Bytes of device scratch that embscale_cuda_kv_table_group needs for a batch of n keys. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_group_scratch(uint64_t n, uint64_t* bytes);

/* Groups a batch by bucket: d_order[0, n) receives the positions sorted by (bucket of the key,
 * position), so each bucket's keys stay in input order; d_offsets[g] the first index of group g
 * in d_order, d_offsets[groups] = n; *d_groups the number of groups (non-empty buckets). A key's
 * bucket is mix64(key) & (buckets - 1), buckets a power of two below 2^32; n < 2^32.
 * d_order and d_offsets hold n and n + 1 uint32. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_group(const uint64_t* d_keys, uint64_t n, uint64_t buckets,
                                                      uint32_t* d_order, uint32_t* d_offsets, uint64_t* d_groups,
                                                      void* d_scratch, uint64_t scratch_bytes, void* stream);

/* Runs a batch call (kv::portable::BatchRunner) with one tile per group: of 16 lanes for
 * 16-slot buckets, else a warp's 32. With batch->order set, group g is that grouping's (groups:
 * *batch->group_count on the device when set, else batch->groups); without it, group g is key
 * g (reads). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_run(const void* state, const void* batch, void* stream);

/* Bytes of device scratch that embscale_cuda_kv_table_export needs for a range of n slots. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_export_scratch(uint64_t n, uint64_t* bytes);

/* The entries of slots [first, end) of `arrays` (a kv::portable::TableArrays) that hold a key
 * whose score is >= min_score, in slot order: their keys, scores and rows (row_width floats
 * each, near or far) into d_keys, d_scores and d_rows, which have room for end - first entries;
 * *d_count (device memory) their number. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_export(const void* arrays, uint64_t first, uint64_t end,
                                                       uint64_t min_score, uint64_t* d_keys, uint64_t* d_scores,
                                                       float* d_rows, uint64_t* d_count, void* d_scratch,
                                                       uint64_t scratch_bytes, void* stream);

/* Hybrid mode's far rows: `bytes` of pinned host memory mapped into the device's address space
 * (cudaHostAlloc, mapped and portable: the kernels read and write it at the same address over the
 * bus), and its release. bytes == 0 gives NULL. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_host_alloc(uint64_t bytes, void** pointer);
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_host_free(void* pointer);

/* Moves every entry of `from` into `to` (both kv::portable::TableArrays of the same bucket
 * capacity and row width, `to` of at least as many buckets, its keys all empty: a rehash). One
 * tile per bucket of `from`: a bucket's keys go to the buckets it splits into, so tiles never
 * share one. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_rehash(const void* from, const void* to, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* The family's functions, named without the embscale_cuda_ prefix (device/kernel_families.h). */
#define EMBSCALE_CUDA_KV_TABLE_FUNCTIONS(X) \
  X(kv_table_layout)                        \
  X(kv_table_group_scratch)                 \
  X(kv_table_group)                         \
  X(kv_table_run)                           \
  X(kv_table_export_scratch)                \
  X(kv_table_export)                        \
  X(kv_table_host_alloc)                    \
  X(kv_table_host_free)                     \
  X(kv_table_rehash)

#endif /* EMBSCALE_DEVICE_FAMILIES_KV_TABLE_H */
