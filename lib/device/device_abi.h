/* The device seam: the plain C ABI that libembscale_cuda.so (kernels/) implements and
 * libembscale calls.
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
 * meaning, and any function added, bumps EMBSCALE_CUDA_ABI_VERSION: the loader refuses a library
 * whose embscale_cuda_abi_version() differs from the one it was compiled with.
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

#define EMBSCALE_CUDA_ABI_VERSION 1
/* The file name the loader looks for (next to the executable, ...; device/library_search.hpp). */
#define EMBSCALE_CUDA_LIBRARY_NAME "libembscale_cuda.so"

/* Return codes. The text of the last failure on the calling thread (the CUDA error string, the
 * offending index, ...) is in embscale_cuda_last_error_detail(). */
enum {
  EMBSCALE_CUDA_OK = 0,
  EMBSCALE_CUDA_NO_DEVICE = 1,        /* no usable GPU or driver (cudaGetDeviceCount failed or 0) */
  EMBSCALE_CUDA_CUDA_ERROR = 2,       /* any other CUDA runtime failure (launch, copy, memory) */
  EMBSCALE_CUDA_BAD_INDEX = 3,        /* a row index outside [0, num_rows) */
  EMBSCALE_CUDA_INVALID_ARGUMENT = 4  /* negative size, NULL pointer with n > 0, size overflow */
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

/* Row gather on the current device: d_out[i, :] = d_table[d_rows[i], :] for i in [0, n).
 * d_table: row-major [num_rows, dim] floats; d_rows: n int64 row indices; d_out: [n, dim]
 * (must not overlap d_table). All three are device pointers. Moves 16-byte vectors when dim is a
 * multiple of 4 and d_table and d_out are 16-byte aligned (8-byte ones for even dim).
 *
 * An index outside [0, num_rows) is never read: its output row is zero-filled and the call
 * returns EMBSCALE_CUDA_BAD_INDEX, naming the first such position in the detail. To know that it
 * synchronizes `stream` before returning. n == 0 returns EMBSCALE_CUDA_OK and launches nothing. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows(const float* d_table, int64_t num_rows,
                                                   int64_t dim, const int64_t* d_rows, int64_t n,
                                                   float* d_out, void* stream);

/* The same gather, asynchronous: enqueues the kernel on `stream` and returns. The smallest
 * position i whose index is out of range is folded (atomic min) into *d_first_bad, a device
 * uint64 that the caller sets to UINT64_MAX (all bytes 0xff) beforehand and reads after
 * synchronizing; it stays UINT64_MAX when every index was valid. Returns an error only for
 * invalid arguments or a failed launch. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_async(const float* d_table, int64_t num_rows,
                                                         int64_t dim, const int64_t* d_rows,
                                                         int64_t n, float* d_out,
                                                         uint64_t* d_first_bad, void* stream);

/* Host convenience: copies table and rows (host memory) to the current device, runs
 * embscale_cuda_gather_rows, copies the [n, dim] result into out (host memory) and frees the
 * device buffers; synchronous. On EMBSCALE_CUDA_BAD_INDEX, out holds the rows gathered for the
 * valid indices and zeros for the others. n == 0 returns EMBSCALE_CUDA_OK without touching
 * the device. */
EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_host(const float* table, int64_t num_rows,
                                                        int64_t dim, const int64_t* rows,
                                                        int64_t n, float* out);

#ifdef __cplusplus
} /* extern "C" */
#endif

/* Every function above, named without its embscale_cuda_ prefix: the loader resolves each one
 * into a typed pointer of embscale::device::DeviceFunctions, and refuses a library lacking any.
 * A new function is declared above and named here (lib/device/README.md). abi_version comes
 * first: the loader calls it before resolving the others. */
#define EMBSCALE_DEVICE_ABI_FUNCTIONS(X) \
  X(abi_version)                         \
  X(error_string)                        \
  X(last_error_detail)                   \
  X(device_count)                        \
  X(versions)                            \
  X(gather_rows)                         \
  X(gather_rows_async)                   \
  X(gather_rows_host)

#endif /* EMBSCALE_DEVICE_ABI_H */
