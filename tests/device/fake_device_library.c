/* A stand-in for libembscale_cuda.so built by the host C compiler, so that the device seam
 * (lib/device) and its users (lib/embedding/cuda_backend) are tested without CUDA or a GPU.
 *
 * It implements every function of device/device_abi.h on host memory, following the header's
 * contract: one "device" whose pointers are host pointers, a stream that is ignored, an index
 * outside the table zero-filled and reported with the real library's wording. Its versions are
 * runtime 1234 and driver 5678, values no CUDA has, so a test can tell where they came from.
 *
 * Streams are counted handles that do nothing (every call completes at once), events hold the
 * host's monotonic time at their record, device memory is host memory from malloc.
 *
 * Compile definitions break it the ways a real file can be broken:
 *   EMBSCALE_FAKE_OMIT_GATHER_ROWS_ASYNC   lacks embscale_cuda_gather_rows_async (a partial
 *                                          build of the row_gather family)
 *   EMBSCALE_FAKE_OMIT_STREAM_CREATE       lacks embscale_cuda_stream_create (a core function)
 *   EMBSCALE_FAKE_OMIT_ABI_VERSION         lacks embscale_cuda_abi_version (not our library)
 *   EMBSCALE_FAKE_ABI_VERSION_OFFSET=k     reports ABI version EMBSCALE_CUDA_ABI_VERSION + k
 *   EMBSCALE_FAKE_ROW_GATHER_VERSION_OFFSET=k  reports row_gather version + k (another build's)
 *   EMBSCALE_FAKE_OMIT_KV_TABLE            lacks the kv_table family (the GPU table), which
 *                                          fake_kv_table.cpp otherwise implements on host memory
 *   EMBSCALE_FAKE_OMIT_NCCL                lacks the nccl family, which fake_nccl.cpp otherwise
 *                                          implements between processes over shared memory
 *   EMBSCALE_FAKE_OMIT_EMBEDDING_ROWS      lacks the embedding_rows family (a static table's rows on
 *                                          the device), which fake_embedding_rows.cpp implements
 *
 * At run time, $EMBSCALE_FAKE_DEVICE_COUNT (a number >= 0, default 1) is the number of devices it
 * reports, so that a whole CLI run (mpiexec and its ranks) can stand on a node with no GPU, or
 * with several; 0 fails as the real library does on a machine without one.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime under strict C11 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "device/device_abi.h"
#include "device/kernel_families.h"

#ifndef EMBSCALE_FAKE_ABI_VERSION_OFFSET
#define EMBSCALE_FAKE_ABI_VERSION_OFFSET 0
#endif
#ifndef EMBSCALE_FAKE_ROW_GATHER_VERSION_OFFSET
#define EMBSCALE_FAKE_ROW_GATHER_VERSION_OFFSET 0
#endif

static _Thread_local char detail[256];

static int fail(int code, const char* text) {
  snprintf(detail, sizeof detail, "%s", text);
  return code;
}

/* fake_device_memory.cpp: the "device" allocations, for the stand-in NCCL's strict mode. */
void embscale_fake_device_memory_add(uintptr_t address, uint64_t bytes); /* an address: nothing is read */
void embscale_fake_device_memory_remove(const void* p);

/* fail() for the stand-in's C++ parts (fake_nccl.cpp): one per-thread detail for the library. */
int embscale_fake_fail(int code, const char* text) { return fail(code, text); }
void embscale_fake_clear_detail(void) { detail[0] = '\0'; }

#ifndef EMBSCALE_FAKE_OMIT_ABI_VERSION
EMBSCALE_CUDA_EXPORT int embscale_cuda_abi_version(void) {
  return EMBSCALE_CUDA_ABI_VERSION + EMBSCALE_FAKE_ABI_VERSION_OFFSET;
}
#endif

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_error_string(int code) { return embscale_cuda_code_text(code); }

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_last_error_detail(void) { return detail; }

EMBSCALE_CUDA_EXPORT int embscale_cuda_device_count(int* count) {
  detail[0] = '\0';
  if (count == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "count is NULL");
  *count = 1;
  const char* wanted = getenv("EMBSCALE_FAKE_DEVICE_COUNT");
  if (wanted != NULL && wanted[0] != '\0') *count = atoi(wanted);
  if (*count <= 0) {
    *count = 0;
    return fail(EMBSCALE_CUDA_NO_DEVICE, "cudaGetDeviceCount: no CUDA-capable device is detected");
  }
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
static int gather(const float* table, int64_t num_rows, int64_t dim, const int64_t* rows, int64_t n, float* out,
                  uint64_t* first_bad) {
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

static int gather_reporting(const float* table, int64_t num_rows, int64_t dim, const int64_t* rows, int64_t n,
                            float* out) {
  uint64_t first_bad = UINT64_MAX;
  const int rc = gather(table, num_rows, dim, rows, n, out, &first_bad);
  if (rc != EMBSCALE_CUDA_OK || first_bad == UINT64_MAX) return rc;
  snprintf(detail, sizeof detail,
           "rows[%llu] = %lld is outside [0, %lld) (the first such position; its output row is zero)",
           (unsigned long long)first_bad, (long long)rows[first_bad], (long long)num_rows);
  return EMBSCALE_CUDA_BAD_INDEX;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows(const float* d_table, int64_t num_rows, int64_t dim,
                                                   const int64_t* d_rows, int64_t n, float* d_out, void* stream) {
  (void)stream;
  return gather_reporting(d_table, num_rows, dim, d_rows, n, d_out);
}

#ifndef EMBSCALE_FAKE_OMIT_GATHER_ROWS_ASYNC
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_async(const float* d_table, int64_t num_rows, int64_t dim,
                                                         const int64_t* d_rows, int64_t n, float* d_out,
                                                         uint64_t* d_first_bad, void* stream) {
  (void)stream;
  if (n > 0 && d_first_bad == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "d_first_bad is NULL");
  uint64_t first_bad = UINT64_MAX;
  const int rc = gather(d_table, num_rows, dim, d_rows, n, d_out, &first_bad);
  if (first_bad != UINT64_MAX && first_bad < *d_first_bad) *d_first_bad = first_bad;
  return rc;
}
#endif

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_host(const float* table, int64_t num_rows, int64_t dim,
                                                        const int64_t* rows, int64_t n, float* out) {
  return gather_reporting(table, num_rows, dim, rows, n, out);
}

/* ---- the core's devices, families, streams, events and memory ---- */

static int current_device = 0;

EMBSCALE_CUDA_EXPORT int embscale_cuda_set_device(int device) {
  detail[0] = '\0';
  int count = 0;
  if (embscale_cuda_device_count(&count) != EMBSCALE_CUDA_OK || device < 0 || device >= count)
    return fail(EMBSCALE_CUDA_CUDA_ERROR, "cudaSetDevice: invalid device ordinal");
  current_device = device;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_get_device(int* device) {
  detail[0] = '\0';
  if (device == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "device is NULL");
  *device = current_device;
  return EMBSCALE_CUDA_OK;
}

/* "embscale fake device <n>", compute capability 9.0 and 1 GiB, values that name where they came from. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_device_properties(int device, char* name, int64_t name_bytes, int* cc_major,
                                                         int* cc_minor, int64_t* memory_bytes) {
  detail[0] = '\0';
  if (name != NULL && name_bytes <= 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "name_bytes must be > 0");
  int count = 0;
  if (embscale_cuda_device_count(&count) != EMBSCALE_CUDA_OK || device < 0 || device >= count)
    return fail(EMBSCALE_CUDA_CUDA_ERROR, "cudaGetDeviceProperties: cudaErrorInvalidDevice: invalid device ordinal");
  if (name != NULL) snprintf(name, (size_t)name_bytes, "embscale fake device %d", device);
  if (cc_major != NULL) *cc_major = 9;
  if (cc_minor != NULL) *cc_minor = 0;
  if (memory_bytes != NULL) *memory_bytes = (int64_t)1 << 30;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_family_version(const char* family, int* version) {
  detail[0] = '\0';
  if (family == NULL || version == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "family or version is NULL");
  *version = strcmp(family, "row_gather") == 0
                 ? EMBSCALE_CUDA_ROW_GATHER_VERSION + EMBSCALE_FAKE_ROW_GATHER_VERSION_OFFSET
                 : 0;
#ifndef EMBSCALE_FAKE_OMIT_KV_TABLE
  if (strcmp(family, "kv_table") == 0) *version = EMBSCALE_CUDA_KV_TABLE_VERSION; /* fake_kv_table.cpp */
#endif
#ifndef EMBSCALE_FAKE_OMIT_NCCL
  if (strcmp(family, "nccl") == 0) *version = EMBSCALE_CUDA_NCCL_VERSION; /* fake_nccl.cpp */
#endif
#ifndef EMBSCALE_FAKE_OMIT_EMBEDDING_ROWS
  if (strcmp(family, "embedding_rows") == 0)
    *version = EMBSCALE_CUDA_EMBEDDING_ROWS_VERSION; /* fake_embedding_rows.cpp */
#endif
#ifndef EMBSCALE_FAKE_OMIT_EMBEDDING_STEP
  if (strcmp(family, "embedding_step") == 0)
    *version = EMBSCALE_CUDA_EMBEDDING_STEP_VERSION; /* fake_embedding_step.cpp */
#endif
  return EMBSCALE_CUDA_OK;
}

struct fake_stream {
  int unused;
};
struct fake_event {
  double seconds;
  int recorded;
};

#ifndef EMBSCALE_FAKE_OMIT_STREAM_CREATE
EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_create(void** stream) {
  detail[0] = '\0';
  if (stream == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "stream is NULL");
  *stream = calloc(1, sizeof(struct fake_stream));
  return *stream != NULL ? EMBSCALE_CUDA_OK : fail(EMBSCALE_CUDA_CUDA_ERROR, "out of host memory");
}
#endif

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_destroy(void* stream) {
  detail[0] = '\0';
  free(stream);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_synchronize(void* stream) {
  (void)stream;
  detail[0] = '\0';
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_create(void** event) {
  detail[0] = '\0';
  if (event == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
  *event = calloc(1, sizeof(struct fake_event));
  return *event != NULL ? EMBSCALE_CUDA_OK : fail(EMBSCALE_CUDA_CUDA_ERROR, "out of host memory");
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_destroy(void* event) {
  detail[0] = '\0';
  free(event);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_record(void* event, void* stream) {
  (void)stream;
  detail[0] = '\0';
  if (event == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  struct fake_event* e = (struct fake_event*)event;
  e->seconds = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
  e->recorded = 1;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_synchronize(void* event) {
  detail[0] = '\0';
  if (event == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
  return EMBSCALE_CUDA_OK;
}

/* Work completes at the call, so a recorded event is done; one never recorded too (as CUDA). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_query(void* event, int* done) {
  detail[0] = '\0';
  if (event == NULL || done == NULL) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event or done is NULL");
  *done = 1;
  return EMBSCALE_CUDA_OK;
}

/* As CUDA: an event never recorded has no time (cudaErrorInvalidResourceHandle). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_elapsed_ms(void* start, void* end, float* milliseconds) {
  detail[0] = '\0';
  if (start == NULL || end == NULL || milliseconds == NULL)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "start, end or milliseconds is NULL");
  const struct fake_event* s = (const struct fake_event*)start;
  const struct fake_event* e = (const struct fake_event*)end;
  if (!s->recorded || !e->recorded)
    return fail(EMBSCALE_CUDA_CUDA_ERROR, "cudaEventElapsedTime: an event that was never recorded");
  *milliseconds = (float)(1e3 * (e->seconds - s->seconds));
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc(int64_t bytes, void** pointer) {
  detail[0] = '\0';
  if (pointer == NULL || bytes < 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "pointer is NULL or bytes < 0");
  *pointer = NULL;
  if (bytes == 0) return EMBSCALE_CUDA_OK;
  /* $EMBSCALE_FAKE_DEVICE_MEMORY_LIMIT (read per call, so a test can set it on one rank): a larger
   * allocation fails as a full GPU's does. */
  const char* limit = getenv("EMBSCALE_FAKE_DEVICE_MEMORY_LIMIT");
  void* allocated = limit != NULL && bytes > atoll(limit) ? NULL : malloc((size_t)bytes);
  if (allocated == NULL) {
    snprintf(detail, sizeof detail, "cudaMalloc of %lld bytes: cudaErrorMemoryAllocation: out of memory",
             (long long)bytes);
    return EMBSCALE_CUDA_CUDA_ERROR;
  }
  embscale_fake_device_memory_add((uintptr_t)allocated, (uint64_t)bytes);
  *pointer = allocated;
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_free(void* pointer) {
  detail[0] = '\0';
  if (pointer != NULL) embscale_fake_device_memory_remove(pointer);
  free(pointer);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc_host(int64_t bytes, void** pointer) {
  detail[0] = '\0';
  if (pointer == NULL || bytes < 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "pointer is NULL or bytes < 0");
  *pointer = NULL;
  if (bytes == 0) return EMBSCALE_CUDA_OK;
  *pointer = malloc((size_t)bytes);
  return *pointer != NULL ? EMBSCALE_CUDA_OK : fail(EMBSCALE_CUDA_CUDA_ERROR, "cudaMallocHost: out of memory");
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_free_host(void* pointer) {
  detail[0] = '\0';
  free(pointer);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_copy_async(void* dst, const void* src, int64_t bytes, void* stream) {
  (void)stream;
  detail[0] = '\0';
  if (bytes < 0 || (bytes > 0 && (dst == NULL || src == NULL)))
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes < 0, or a NULL pointer with bytes > 0");
  if (bytes > 0) memmove(dst, src, (size_t)bytes);
  return EMBSCALE_CUDA_OK;
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_memset_async(void* dst, int value, int64_t bytes, void* stream) {
  (void)stream;
  detail[0] = '\0';
  if (bytes < 0 || (bytes > 0 && dst == NULL))
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes < 0, or a NULL pointer with bytes > 0");
  if (bytes > 0) memset(dst, value, (size_t)bytes);
  return EMBSCALE_CUDA_OK;
}
