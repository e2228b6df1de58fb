/* The kernel families of libembscale_cuda.so, the registry of the device seam. A family is a set
 * of kernels with one purpose (the row gather; later a device KV table, a pooling, an optimizer),
 * declared in its own header of device/families/ with its own version, and implemented in one
 * .cu of kernels/.
 *
 * Each line: F(name, version, functions): `name` is the family's name as
 * embscale_cuda_family_version() takes it and as embscale::device::KernelFamily names it;
 * `version` its EMBSCALE_CUDA_<NAME>_VERSION; `functions` the macro listing its functions. The
 * loader (device/device_library.hpp) resolves each family on its own: a library lacking a family,
 * or holding another version of it, still loads, and only a call into that family is refused.
 *
 * Adding a family: write device/families/<name>.h (its functions, version and list, as
 * row_gather.h does) and kernels/<name>.cu (the kernels behind them), then add one line here. */
#ifndef EMBSCALE_DEVICE_KERNEL_FAMILIES_H
#define EMBSCALE_DEVICE_KERNEL_FAMILIES_H

#include "device/families/embedding_rows.h"
#include "device/families/embedding_step.h"
#include "device/families/kv_table.h"
#include "device/families/nccl.h"
#include "device/families/row_gather.h"

#define EMBSCALE_DEVICE_KERNEL_FAMILIES(F)                                                        \
  F(row_gather, EMBSCALE_CUDA_ROW_GATHER_VERSION, EMBSCALE_CUDA_ROW_GATHER_FUNCTIONS)             \
  F(kv_table, EMBSCALE_CUDA_KV_TABLE_VERSION, EMBSCALE_CUDA_KV_TABLE_FUNCTIONS)                   \
  F(nccl, EMBSCALE_CUDA_NCCL_VERSION, EMBSCALE_CUDA_NCCL_FUNCTIONS)                               \
  F(embedding_rows, EMBSCALE_CUDA_EMBEDDING_ROWS_VERSION, EMBSCALE_CUDA_EMBEDDING_ROWS_FUNCTIONS) \
  F(embedding_step, EMBSCALE_CUDA_EMBEDDING_STEP_VERSION, EMBSCALE_CUDA_EMBEDDING_STEP_FUNCTIONS)

#endif /* EMBSCALE_DEVICE_KERNEL_FAMILIES_H */
