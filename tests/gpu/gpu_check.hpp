// What the standalone GPU test binaries share (no GoogleTest on the GPU machine): CHECK counts
// checks and failures and prints each failure with its values; CUDA_OK ends the program on a
// CUDA error, naming the call, and ABI_OK on a failed call of libembscale_cuda.so. Each binary reports g_failures of g_checks at its end.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include "device/device_abi.h"

namespace embscale::gpu_check {
inline int g_failures = 0;
inline int g_checks = 0;

// True, after printing why, when there is no usable CUDA device: main then returns 77 (skipped).
inline bool no_gpu() {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err == cudaSuccess && devices > 0) return false;
  std::printf("SKIP: no CUDA device (cudaGetDeviceCount: %s)\n",
              err != cudaSuccess ? cudaGetErrorString(err) : "0 devices");
  return true;
}
}  // namespace embscale::gpu_check

#define CHECK(cond, ...)                                          \
  do {                                                            \
    ++embscale::gpu_check::g_checks;                              \
    if (!(cond)) {                                                \
      ++embscale::gpu_check::g_failures;                          \
      std::printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
      std::printf(__VA_ARGS__);                                   \
      std::printf("\n");                                          \
    }                                                             \
  } while (false)

#define CUDA_OK(call)                                                                                 \
  do {                                                                                                \
    const cudaError_t check_err_ = (call);                                                            \
    if (check_err_ != cudaSuccess) {                                                                  \
      std::printf("FAIL %s:%d: %s: %s\n", __FILE__, __LINE__, #call, cudaGetErrorString(check_err_)); \
      std::exit(1);                                                                                   \
    }                                                                                                 \
  } while (false)

// An ABI call of libembscale_cuda.so that must succeed: ends the program with its code and the
// library's detail otherwise.
#define ABI_OK(call)                                                                        \
  do {                                                                                      \
    const int abi_code_ = (call);                                                           \
    if (abi_code_ != EMBSCALE_CUDA_OK) {                                                    \
      std::printf("FAIL %s:%d: %s returned %d: %s\n", __FILE__, __LINE__, #call, abi_code_, \
                  embscale_cuda_last_error_detail());                                       \
      std::exit(1);                                                                         \
    }                                                                                       \
  } while (false)
