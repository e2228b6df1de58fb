/* A stand-in for libembscale_cuda.so built by the host C compiler, so that the device seam
 * (lib/device) and its users (lib/embedding/cuda_backend) are tested without CUDA or a GPU.
 *
 * It implements every function of device/device_abi.h on host memory, following the header's
 * contract: one "device" whose pointers are host pointers, a stream that is ignored, an index
 * outside the table zero-filled and reported with the real library's wording. Its versions are
 * runtime 1234 and driver 5678, values no CUDA has, so a test can tell where they came from.
 *
 * Compile definitions break it the ways a real file can be broken:
 *   EMBSCALE_FAKE_OMIT_GATHER_ROWS_ASYNC   lacks embscale_cuda_gather_rows_async (a partial build)
 *   EMBSCALE_FAKE_OMIT_ABI_VERSION         lacks embscale_cuda_abi_version (not our library)
 *   EMBSCALE_FAKE_ABI_VERSION_OFFSET=k     reports ABI version EMBSCALE_CUDA_ABI_VERSION + k
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "device/device_abi.h"

#ifndef EMBSCALE_FAKE_ABI_VERSION_OFFSET
#define EMBSCALE_FAKE_ABI_VERSION_OFFSET 0
#endif

static _Thread_local char detail[256];

static int fail(int code, const char* text) {
  snprintf(detail, sizeof detail, "%s", text);
  return code;
}

#ifndef EMBSCALE_FAKE_OMIT_ABI_VERSION
EMBSCALE_CUDA_EXPORT int embscale_cuda_abi_version(void) {
  return EMBSCALE_CUDA_ABI_VERSION + EMBSCALE_FAKE_ABI_VERSION_OFFSET;
}
#endif

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_error_string(int code) {
  return embscale_cuda_code_text(code);
}

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_last_error_detail(void) { return detail; }

EMBSCALE_CUDA_EXPORT int embscale_cuda_device_count(int* count) {
  detail[0] = '\0';
  if (count == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "count is NULL");
  *count = 1;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_versions(int* runtime_version, int* driver_version) {
  detail[0] = '\0';
  if (runtime_version != NULL) *runtime_version = 1234;
  if (driver_version != NULL) *driver_version = 5678;
  return EMBSCALE_CUDA_OK;
}

/* The gather of the header's contract. Runs backwards so that the last bad position written to
 * *first_bad is the smallest; *first_bad is left alone when every index is valid. */
static int gather(const float* table, int64_t num_rows, int64_t dim, const int64_t* rows,
                  int64_t n, float* out, uint64_t* first_bad) {
  detail[0] = '\0';
  if (num_rows < 0 || dim < 0 || n < 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "negative size");
  if (n > 0 && (rows == NULL || (dim > 0 && (out == NULL || (num_rows > 0 && table == NULL)))))
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
  for (int64_t i = n - 1; i >= 0; --i) {
    const int64_t r = rows[i];
    float* dst = out + i * dim;
    if (r < 0 || r >= num_rows) {
      memset(dst, 0, (size_t)dim * sizeof(float));
      *first_bad = (uint64_t)i;
    } else {
      memcpy(dst, table + r * dim, (size_t)dim * sizeof(float));
    }
  }
  return EMBSCALE_CUDA_OK;
}

static int gather_reporting(const float* table, int64_t num_rows, int64_t dim,
                            const int64_t* rows, int64_t n, float* out) {
  uint64_t first_bad = UINT64_MAX;
  const int rc = gather(table, num_rows, dim, rows, n, out, &first_bad);
  if (rc != EMBSCALE_CUDA_OK || first_bad == UINT64_MAX) return rc;
  snprintf(detail, sizeof detail,
           "rows[%llu] = %lld is outside [0, %lld) (the first such position; its output row is zero)",
           (unsigned long long)first_bad, (long long)rows[first_bad], (long long)num_rows);
  return EMBSCALE_CUDA_BAD_INDEX;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows(const float* d_table, int64_t num_rows,
                                                   int64_t dim, const int64_t* d_rows, int64_t n,
                                                   float* d_out, void* stream) {
  (void)stream;
  return gather_reporting(d_table, num_rows, dim, d_rows, n, d_out);
}

#ifndef EMBSCALE_FAKE_OMIT_GATHER_ROWS_ASYNC
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_async(const float* d_table, int64_t num_rows,
                                                         int64_t dim, const int64_t* d_rows,
                                                         int64_t n, float* d_out,
                                                         uint64_t* d_first_bad, void* stream) {
  (void)stream;
  if (n > 0 && d_first_bad == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "d_first_bad is NULL");
  uint64_t first_bad = UINT64_MAX;
  const int rc = gather(d_table, num_rows, dim, d_rows, n, d_out, &first_bad);
  if (first_bad != UINT64_MAX && first_bad < *d_first_bad) *d_first_bad = first_bad;
  return rc;
}
#endif

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_host(const float* table, int64_t num_rows,
                                                        int64_t dim, const int64_t* rows,
                                                        int64_t n, float* out) {
  return gather_reporting(table, num_rows, dim, rows, n, out);
}
