// What the standalone GPU test binaries share (no GoogleTest on the GPU machine): CHECK counts
// checks and failures and prints each failure with its values; CUDA_OK ends the program on a
// CUDA error, naming the call, and ABI_OK on a failed call of libembscale_cuda.so. Each binary reports g_failures of g_checks at its end.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

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

namespace embscale::gpu_check {

// A device copy of a host vector (cudaMalloc; the caller frees it), and a vector's worth back.
template <class T> T* to_device(const std::vector<T>& from) {
  T* p = nullptr;
  CUDA_OK(cudaMalloc(&p, from.size() * sizeof(T) + 8));
  CUDA_OK(cudaMemcpy(p, from.data(), from.size() * sizeof(T), cudaMemcpyHostToDevice));
  return p;
}
template <class T> std::vector<T> to_host(const T* p, std::size_t n) {
  std::vector<T> out(n);
  CUDA_OK(cudaMemcpy(out.data(), p, n * sizeof(T), cudaMemcpyDeviceToHost));
  return out;
}

// Units in the last place between two floats of one sign (large across signs).
inline std::int64_t ulps_apart(float a, float b) {
  std::int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x > y ? static_cast<std::int64_t>(x) - y : static_cast<std::int64_t>(y) - x;
}

}  // namespace embscale::gpu_check
