/* The stand-in library's embedding_rows family (device/families/embedding_rows.h) on host memory:
 * the same portable code the kernels run (embedding/portable: row_of, optimizer_ref), in loops, so
 * the device row store's host side (its uploads, index checks, apply and sweep calls) runs in CI
 * through the seam as on a GPU (tests/embedding/device_static_row_store_test.cpp). Left out with
 * EMBSCALE_FAKE_OMIT_EMBEDDING_ROWS (a library without the family). */
#ifndef EMBSCALE_FAKE_OMIT_EMBEDDING_ROWS

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <utility>

#include "device/families/embedding_rows.h"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/portable/row_codec_ref.hpp"
#include "embedding/portable/rows_ref.hpp"
#include "fake_device_memory.hpp"

namespace portable = embscale::embedding::portable;

// Every buffer the header calls device memory is the stand-in's (in strict mode, tests/device):
// a host pointer would fault on a GPU.
using embscale::fake::on_device;

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_layout(uint64_t* range_bytes, uint64_t* optimizer_bytes) {
  if (!range_bytes || !optimizer_bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *range_bytes = sizeof(portable::OwnedRange);
  *optimizer_bytes = sizeof(portable::OptimizerRef);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_index(const void* ranges, uint64_t range_count,
                                                            const int64_t* keys, uint64_t n, int64_t* rows,
                                                            uint64_t* first_bad, void* stream) {
  (void)stream;
  if (n == 0) return EMBSCALE_CUDA_OK;
  if (!keys || !rows || !first_bad || (range_count > 0 && !ranges)) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{ranges, range_count * sizeof(portable::OwnedRange)},
                  {keys, n * sizeof(int64_t)},
                  {rows, n * sizeof(int64_t)},
                  {first_bad, sizeof(uint64_t)}},
                 "embedding_rows_index", code))
    return code;
  for (uint64_t i = 0; i < n; ++i) {
    rows[i] = portable::row_of(static_cast<const portable::OwnedRange*>(ranges), range_count, keys[i]);
    if (rows[i] < 0 && i < *first_bad) *first_bad = i;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_gather(const float* table, uint64_t row_width, uint64_t dim,
                                                             const int64_t* rows, uint64_t n, float* out,
                                                             void* stream) {
  (void)stream;
  if (n == 0 || dim == 0) return EMBSCALE_CUDA_OK;
  if (!table || !rows || !out || dim > row_width) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{rows, n * sizeof(int64_t)}, {out, n * dim * sizeof(float)}}, "embedding_rows_gather", code))
    return code;
  for (uint64_t i = 0; i < n; ++i)
    std::memcpy(out + i * dim, table + static_cast<uint64_t>(rows[i]) * row_width, dim * sizeof(float));
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_apply(const void* optimizer, float* table, uint64_t row_width,
                                                            uint64_t dim, const int64_t* rows, const float* grads,
                                                            uint64_t n, uint8_t* touched, void* stream) {
  (void)stream;
  if (n == 0) return EMBSCALE_CUDA_OK;
  if (!optimizer || !table || !rows || !grads || dim > row_width) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{rows, n * sizeof(int64_t)}, {grads, n * dim * sizeof(float)}}, "embedding_rows_apply", code))
    return code;
  portable::OptimizerRef o;
  std::memcpy(&o, optimizer, sizeof o);
  for (uint64_t i = 0; i < n; ++i) {
    float* row = table + static_cast<uint64_t>(rows[i]) * row_width;
    portable::update_row(o, row, row + dim, grads + i * dim, dim);
    if (touched) touched[rows[i]] = 1;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_sweep(const void* optimizer, float* table, uint64_t row_width,
                                                            uint64_t dim, uint64_t num_rows, uint8_t* touched,
                                                            void* stream) {
  (void)stream;
  if (num_rows == 0) return EMBSCALE_CUDA_OK;
  if (!optimizer || !table || !touched || dim > row_width) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  portable::OptimizerRef o;
  std::memcpy(&o, optimizer, sizeof o);
  for (uint64_t r = 0; r < num_rows; ++r) {
    if (touched[r] == 0) portable::untouched_row(o, table + r * row_width, table + r * row_width + dim, dim);
    touched[r] = 0;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_gather16(const uint16_t* table, int bfloat, uint64_t row_width,
                                                               uint64_t dim, const int64_t* rows, uint64_t n,
                                                               float* out, void* stream) {
  (void)stream;
  if (n == 0 || dim == 0) return EMBSCALE_CUDA_OK;
  if (!table || !rows || !out || dim > row_width) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{rows, n * sizeof(int64_t)}, {out, n * dim * sizeof(float)}}, "embedding_rows_gather16", code))
    return code;
  for (uint64_t i = 0; i < n; ++i)
    for (uint64_t d = 0; d < dim; ++d)
      out[i * dim + d] = portable::decode16(table[static_cast<uint64_t>(rows[i]) * row_width + d], bfloat != 0);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_apply16(const void* optimizer, uint16_t* table, int bfloat,
                                                              uint64_t row_width, uint64_t dim, const int64_t* rows,
                                                              const float* grads, uint64_t n, uint8_t* touched,
                                                              float* scratch, void* stream) {
  (void)stream;
  if (n == 0) return EMBSCALE_CUDA_OK;
  if (!optimizer || !table || !rows || !grads || !scratch || dim > row_width) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{rows, n * sizeof(int64_t)}, {grads, n * dim * sizeof(float)}, {scratch, n * row_width * 4}},
                 "embedding_rows_apply16", code))
    return code;
  portable::OptimizerRef o;
  std::memcpy(&o, optimizer, sizeof o);
  for (uint64_t i = 0; i < n; ++i) {
    uint16_t* stored = table + static_cast<uint64_t>(rows[i]) * row_width;
    float* row = scratch + i * row_width;
    for (uint64_t c = 0; c < row_width; ++c) row[c] = portable::decode16(stored[c], bfloat != 0);
    portable::update_row(o, row, row + dim, grads + i * dim, dim);
    for (uint64_t c = 0; c < row_width; ++c) stored[c] = portable::encode16(row[c], bfloat != 0);
    if (touched) touched[rows[i]] = 1;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_sweep16(const void* optimizer, uint16_t* table, int bfloat,
                                                              uint64_t row_width, uint64_t dim, uint64_t first,
                                                              uint64_t count, uint8_t* touched, float* scratch,
                                                              void* stream) {
  (void)stream;
  if (count == 0) return EMBSCALE_CUDA_OK;
  if (!optimizer || !table || !touched || !scratch || dim > row_width) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{scratch, count * row_width * 4}}, "embedding_rows_sweep16", code)) return code;
  portable::OptimizerRef o;
  std::memcpy(&o, optimizer, sizeof o);
  for (uint64_t t = 0; t < count; ++t) {
    const uint64_t r = first + t;
    if (touched[r] == 0) {
      uint16_t* stored = table + r * row_width;
      float* row = scratch + t * row_width;
      for (uint64_t c = 0; c < row_width; ++c) row[c] = portable::decode16(stored[c], bfloat != 0);
      portable::untouched_row(o, row, row + dim, dim);
      for (uint64_t c = 0; c < row_width; ++c) stored[c] = portable::encode16(row[c], bfloat != 0);
    }
    touched[r] = 0;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_scatter(const void* ranges, uint64_t range_count,
                                                              const int64_t* keys, uint64_t n, const float* grads,
                                                              uint64_t dim, float* grad_table, int32_t* touched,
                                                              void* stream) {
  (void)stream;
  if (n == 0) return EMBSCALE_CUDA_OK;
  if (!ranges || !keys || !grads || !grad_table || !touched) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{keys, n * sizeof(int64_t)}, {grads, n * dim * sizeof(float)}}, "embedding_rows_scatter", code))
    return code;
  const auto* r = static_cast<const portable::OwnedRange*>(ranges);
  for (uint64_t i = 0; i < n; ++i) {
    const int64_t row = portable::row_of(r, range_count, keys[i]);
    if (row < 0) return embscale_fake_fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "a key not owned");
    for (uint64_t d = 0; d < dim; ++d) grad_table[static_cast<uint64_t>(row) * dim + d] = 0.0f + grads[i * dim + d];
    touched[row] = 1;
  }
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_select_scratch(uint64_t num_rows, uint64_t* bytes) {
  if (!bytes) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  *bytes = 8 * num_rows + 256;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_rows_select(const void* ranges, uint64_t range_count,
                                                             const int32_t* touched, const float* grad_table,
                                                             uint64_t dim, uint64_t num_rows, int64_t* keys,
                                                             float* grads, uint64_t* count, void* scratch,
                                                             void* stream) {
  (void)stream;
  if (!count) return EMBSCALE_CUDA_INVALID_ARGUMENT;
  if (num_rows > 0 && (!ranges || !touched || !grad_table || !keys || !grads || !scratch))
    return EMBSCALE_CUDA_INVALID_ARGUMENT;
  int code = EMBSCALE_CUDA_OK;
  if (!on_device({{touched, num_rows * sizeof(int32_t)},
                  {grad_table, num_rows * dim * sizeof(float)},
                  {count, sizeof(uint64_t)},
                  {scratch, 8 * num_rows + 256}},
                 "embedding_rows_select", code))
    return code;
  const auto* r = static_cast<const portable::OwnedRange*>(ranges);
  uint64_t n = 0;
  for (uint64_t row = 0; row < num_rows; ++row) {
    if (touched[row] == 0) continue;
    keys[n] = portable::key_of(r, range_count, static_cast<int64_t>(row));
    std::memcpy(grads + n * dim, grad_table + row * dim, dim * sizeof(float));
    ++n;
  }
  *count = n;
  return EMBSCALE_CUDA_OK;
}

}  // extern "C"

#endif /* EMBSCALE_FAKE_OMIT_EMBEDDING_ROWS */
