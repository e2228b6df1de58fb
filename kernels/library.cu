// libembscale_cuda.so: the library-wide entry points of device/device_abi.h (ABI version, error
// texts, devices, versions) and the error state that every kernel family shares
// (abi_boundary.hpp). No kernels here; each family of kernels has its own translation unit.
#include <cuda_runtime.h>

#include <string>

#include "abi_boundary.hpp"
#include "device/device_abi.h"

namespace embscale::cuda {

std::string& last_error_detail() {
  thread_local std::string detail;
  return detail;
}

int fail(int code, const std::string& detail) {
  last_error_detail() = detail;
  return code;
}

int cuda_fail(const char* what, cudaError_t err) {
  return fail(EMBSCALE_CUDA_CUDA_ERROR,
              std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

int device_count(int* count) {
  *count = 0;
  int n = 0;
  const cudaError_t err = cudaGetDeviceCount(&n);
  if (err != cudaSuccess)
    return fail(EMBSCALE_CUDA_NO_DEVICE, std::string("cudaGetDeviceCount: ") + cudaGetErrorString(err));
  if (n == 0) return fail(EMBSCALE_CUDA_NO_DEVICE, "cudaGetDeviceCount: 0 devices");
  *count = n;
  return EMBSCALE_CUDA_OK;
}

}  // namespace embscale::cuda

using embscale::cuda::cuda_fail;
using embscale::cuda::fail;
using embscale::cuda::guarded;

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_abi_version(void) { return EMBSCALE_CUDA_ABI_VERSION; }

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_error_string(int code) {
  return embscale_cuda_code_text(code);
}

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_last_error_detail(void) {
  return embscale::cuda::last_error_detail().c_str();
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_device_count(int* count) {
  return guarded([&] {
    if (count == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "count is NULL");
    return embscale::cuda::device_count(count);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_versions(int* runtime_version, int* driver_version) {
  return guarded([&] {
    if (runtime_version != nullptr) {
      *runtime_version = 0;
      if (const cudaError_t err = cudaRuntimeGetVersion(runtime_version); err != cudaSuccess)
        return cuda_fail("cudaRuntimeGetVersion", err);
    }
    if (driver_version != nullptr) {
      *driver_version = 0;
      if (const cudaError_t err = cudaDriverGetVersion(driver_version); err != cudaSuccess)
        return cuda_fail("cudaDriverGetVersion", err);
    }
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

}  // extern "C"
