/* The device seam: the plain C ABI that libembscale_cuda.so (kernels/) implements and
 * libembscale calls. This header is its core (errors, devices, streams, events, memory); each
 * family of kernels declares its own functions in device/families/ and is listed in
 * device/kernel_families.h.
 *
 * libembscale (host C++, no CUDA) loads the library at run time with dlopen and resolves every
 * function of EMBSCALE_DEVICE_ABI_FUNCTIONS with dlsym (device/device_library.hpp), so the CLI
 * runs on nodes without a GPU or a CUDA runtime: the library links cudart statically and needs
 * only the driver (libcuda.so.1, which cudart opens at the first CUDA call; without it the calls
 * report "no device").
 *
 * Rules of this header: C only, no CUDA types (lib/ never includes a CUDA header; a stream is
 * passed as void*: a cudaStream_t cast to void*, NULL meaning the legacy default stream); every
 * function returns an EMBSCALE_CUDA_* code and never throws. Any change to a signature or a
 * meaning of this header, and any function added here, bumps EMBSCALE_CUDA_ABI_VERSION: the
 * loader refuses a library whose embscale_cuda_abi_version() differs from the one it was
 * compiled with. (A family's change bumps that family's version only.)
 */
#ifndef EMBSCALE_DEVICE_ABI_H
#define EMBSCALE_DEVICE_ABI_H

#include <stdint.h>

#if defined(__GNUC__)
#define EMBSCALE_CUDA_EXPORT __attribute__((visibility("default")))
#else
#define EMBSCALE_CUDA_EXPORT
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the functions of this header (the core: errors, devices, streams, events,
 * memory). The kernel families are versioned each on its own (device/kernel_families.h). */
#define EMBSCALE_CUDA_ABI_VERSION 3
/* The file name the loader looks for (next to the executable, ...; device/library_search.hpp). */
#define EMBSCALE_CUDA_LIBRARY_NAME "libembscale_cuda.so"

/* Return codes. The text of the last failure on the calling thread (the CUDA error string, the
 * offending index, ...) is in embscale_cuda_last_error_detail(). */
enum {
  EMBSCALE_CUDA_OK = 0,
  EMBSCALE_CUDA_NO_DEVICE = 1,        /* no usable GPU or driver (cudaGetDeviceCount failed or 0) */
  EMBSCALE_CUDA_CUDA_ERROR = 2,       /* any other CUDA runtime failure (launch, copy, memory) */
  EMBSCALE_CUDA_BAD_INDEX = 3,        /* a row index outside [0, num_rows) */
  EMBSCALE_CUDA_INVALID_ARGUMENT = 4, /* negative size, NULL pointer with n > 0, size overflow */
  EMBSCALE_CUDA_UNAVAILABLE = 5       /* a library a family needs is missing or too old (NCCL) */
};

/* The text of each code: what embscale_cuda_error_string returns (defined here, beside the codes,
 * so that every implementation of the ABI says the same). */
static inline const char* embscale_cuda_code_text(int code) {
  switch (code) {
    case EMBSCALE_CUDA_OK: return "ok";
    case EMBSCALE_CUDA_NO_DEVICE: return "no CUDA device";
    case EMBSCALE_CUDA_CUDA_ERROR: return "CUDA error";
    case EMBSCALE_CUDA_BAD_INDEX: return "row index out of range";
    case EMBSCALE_CUDA_INVALID_ARGUMENT: return "invalid argument";
    case EMBSCALE_CUDA_UNAVAILABLE: return "unavailable";
    default: return "unknown embscale_cuda error code";
  }
}

/* EMBSCALE_CUDA_ABI_VERSION of the library. The loader calls it before anything else. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_abi_version(void);

/* A static description of a code (embscale_cuda_code_text); never NULL. */
EMBSCALE_CUDA_EXPORT const char* embscale_cuda_error_string(int code);

/* What the last failing call on this thread reported, e.g.
 * "cudaGetDeviceCount: CUDA driver version is insufficient for CUDA runtime version" or
 * "rows[17] = 123456 is outside [0, 1000) ..."; "" after a call that succeeded. Valid until the
 * next call on this thread. */
EMBSCALE_CUDA_EXPORT const char* embscale_cuda_last_error_detail(void);

/* *count = number of CUDA devices. When the runtime reports an error (no driver, no device) it
 * returns EMBSCALE_CUDA_NO_DEVICE with *count = 0 and "cudaGetDeviceCount: <the runtime's error
 * string>" in the detail; also EMBSCALE_CUDA_NO_DEVICE when the runtime counts 0 devices. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_device_count(int* count);

/* Versions as CUDA encodes them (1000 * major + 10 * minor): the runtime the library was built
 * with and the driver found (0 when there is none). Either pointer may be NULL. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_versions(int* runtime_version, int* driver_version);

/* ---- devices ---- */

/* Makes `device` the calling thread's current device (cudaSetDevice) / reads it. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_set_device(int device);
EMBSCALE_CUDA_EXPORT int embscale_cuda_get_device(int* device);
/* What a report records of `device`: its name (NUL-terminated, cut to name_bytes - 1), compute
 * capability and global memory. Any output pointer may be NULL. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_device_properties(int device, char* name, int64_t name_bytes, int* cc_major,
                                                         int* cc_minor, int64_t* memory_bytes);

/* ---- kernel families ---- */

/* The version of the kernel family `family` (its name in EMBSCALE_DEVICE_KERNEL_FAMILIES,
 * device/kernel_families.h, e.g. "row_gather") that the library implements, into *version; 0
 * when it has no such family. Each family is versioned on its own, so a family added or changed
 * leaves the others loadable: the loader refuses a family whose version differs from the one it
 * was compiled with, and only that family. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_family_version(const char* family, int* version);

/* ---- streams and events: opaque handles with create / destroy ----
 * A stream handle is a cudaStream_t and an event handle a cudaEvent_t, passed as void*: code that
 * owns its own CUDA objects (an NCCL communicator's stream, a framework's) passes them as they
 * are; NULL as a stream is the legacy default stream. Work queued on a stream runs in order;
 * calls that take a stream return once the work is queued. */

/* A new non-blocking stream on the current device into *stream. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_create(void** stream);
/* Destroys a stream made by embscale_cuda_stream_create (its queued work still completes). NULL
 * is accepted and ignored. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_destroy(void* stream);
/* Waits until every call queued on `stream` has finished; reports the first asynchronous
 * failure of that work. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_synchronize(void* stream);

/* A new timing event into *event. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_create(void** event);
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_destroy(void* event); /* NULL: ignored */
/* Records `event` on `stream`: it completes when the work queued before it has. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_record(void* event, void* stream);
/* Waits until `event` has completed. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_synchronize(void* event);
/* *done = 1 when `event` has completed, else 0; does not wait. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_query(void* event, int* done);
/* Milliseconds between two completed events recorded on one device, into *milliseconds. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_event_elapsed_ms(void* start, void* end, float* milliseconds);

/* ---- device memory ---- */

/* `bytes` of memory on the current device into *pointer (NULL for bytes == 0), 256-byte aligned. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc(int64_t bytes, void** pointer);
/* Frees memory from embscale_cuda_malloc after the device's queued work (NULL: ignored). */
EMBSCALE_CUDA_EXPORT int embscale_cuda_free(void* pointer);
/* `bytes` of page-locked host memory into *pointer (NULL for bytes == 0): the staging buffers of
 * copies that overlap with the device's work. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc_host(int64_t bytes, void** pointer);
/* Frees memory from embscale_cuda_malloc_host (NULL: ignored); no copy may still use it. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_free_host(void* pointer);
/* Queues a copy of `bytes` from src to dst on `stream`; each may be host or device memory (the
 * direction is inferred from the addresses). From pageable host memory the call returns once the
 * source may be reused; into host memory the bytes are there after the stream is synchronized. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_copy_async(void* dst, const void* src, int64_t bytes, void* stream);
/* Queues setting `bytes` of device memory at dst to `value` on `stream`. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_memset_async(void* dst, int value, int64_t bytes, void* stream);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Every function above, named without its embscale_cuda_ prefix: the loader resolves each one
 * into a typed pointer of embscale::device::DeviceFunctions, and refuses a library lacking any.
 * A new core function is declared above, named here, and bumps EMBSCALE_CUDA_ABI_VERSION; a
 * kernel's function belongs to its family instead (device/kernel_families.h). abi_version comes
 * first: the loader calls it before resolving the others. */
#define EMBSCALE_DEVICE_CORE_FUNCTIONS(X) \
  X(abi_version)                          \
  X(error_string)                         \
  X(last_error_detail)                    \
  X(device_count)                         \
  X(versions)                             \
  X(set_device)                           \
  X(get_device)                           \
  X(device_properties)                    \
  X(family_version)                       \
  X(stream_create)                        \
  X(stream_destroy)                       \
  X(stream_synchronize)                   \
  X(event_create)                         \
  X(event_destroy)                        \
  X(event_record)                         \
  X(event_synchronize)                    \
  X(event_query)                          \
  X(event_elapsed_ms)                     \
  X(malloc)                               \
  X(free)                                 \
  X(malloc_host)                          \
  X(free_host)                            \
  X(copy_async)                           \
  X(memset_async)

#endif /* EMBSCALE_DEVICE_ABI_H */
