// What the standalone GPU test binaries share (no GoogleTest on the GPU machine): CHECK counts
// checks and failures and prints each failure with its values; CUDA_OK ends the program on a
// CUDA error, naming the call, and ABI_OK on a failed call of libembscale_cuda.so. Each binary reports g_failures of g_checks at its end.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>
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

// Device memory holding a copy of a host vector (or n elements), freed at the end of its scope.
template <class T> class DeviceArray {
 public:
  explicit DeviceArray(std::size_t n = 0) : n_(n) {
    if (n_) CUDA_OK(cudaMalloc(&data_, n_ * sizeof(T)));
  }
  explicit DeviceArray(const std::vector<T>& from) : DeviceArray(from.size()) { upload(from); }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  DeviceArray(DeviceArray&& o) noexcept : data_(o.data_), n_(o.n_) { o.data_ = nullptr, o.n_ = 0; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(n_, o.n_);
    return *this;
  }
  ~DeviceArray() { cudaFree(data_); }
  void upload(const std::vector<T>& from) {
    if (n_) CUDA_OK(cudaMemcpy(data_, from.data(), n_ * sizeof(T), cudaMemcpyHostToDevice));
  }
  std::vector<T> download() const {
    std::vector<T> out(n_);
    if (n_) CUDA_OK(cudaMemcpy(out.data(), data_, n_ * sizeof(T), cudaMemcpyDeviceToHost));
    return out;
  }
  T* get() const { return data_; }

 private:
  T* data_ = nullptr;
  std::size_t n_ = 0;
};

// Units in the last place between two floats of one sign (large across signs).
inline std::int64_t ulps_apart(float a, float b) {
  std::int32_t x, y;
  std::memcpy(&x, &a, 4);
  std::memcpy(&y, &b, 4);
  return x > y ? static_cast<std::int64_t>(x) - y : static_cast<std::int64_t>(y) - x;
}

}  // namespace embscale::gpu_check
