// libembscale_cuda.so: the core entry points of device/device_abi.h (ABI version, error texts,
// devices, versions, the kernel families' versions, streams, events, device memory) and the
// error state that every kernel family shares (abi_boundary.hpp). No kernels here; each family
// of kernels has its own translation unit.
#include <cuda_runtime.h>

#include <cstring>
#include <string>

#include "abi_boundary.hpp"
#include "device/device_abi.h"
#include "device/kernel_families.h"

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

EMBSCALE_CUDA_EXPORT int embscale_cuda_set_device(int device) {
  return guarded([&] {
    if (const cudaError_t err = cudaSetDevice(device); err != cudaSuccess) return cuda_fail("cudaSetDevice", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_get_device(int* device) {
  return guarded([&] {
    if (device == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "device is NULL");
    if (const cudaError_t err = cudaGetDevice(device); err != cudaSuccess) return cuda_fail("cudaGetDevice", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

// The families this library was built with: kernel_families.h, the same list the loader reads.
EMBSCALE_CUDA_EXPORT int embscale_cuda_family_version(const char* family, int* version) {
  return guarded([&] {
    if (family == nullptr || version == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "family or version is NULL");
    *version = 0;
#define EMBSCALE_CUDA_FAMILY_VERSION(name, family_version, functions) \
  if (std::strcmp(family, #name) == 0) *version = (family_version);
    EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_CUDA_FAMILY_VERSION)
#undef EMBSCALE_CUDA_FAMILY_VERSION
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_create(void** stream) {
  return guarded([&] {
    if (stream == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "stream is NULL");
    cudaStream_t s = nullptr;
    if (const cudaError_t err = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking); err != cudaSuccess)
      return cuda_fail("cudaStreamCreateWithFlags", err);
    *stream = s;
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_destroy(void* stream) {
  return guarded([&] {
    if (stream == nullptr) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (const cudaError_t err = cudaStreamDestroy(static_cast<cudaStream_t>(stream)); err != cudaSuccess)
      return cuda_fail("cudaStreamDestroy", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_synchronize(void* stream) {
  return guarded([&] {
    if (const cudaError_t err = cudaStreamSynchronize(static_cast<cudaStream_t>(stream)); err != cudaSuccess)
      return cuda_fail("cudaStreamSynchronize", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_create(void** event) {
  return guarded([&] {
    if (event == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
    cudaEvent_t e = nullptr;
    if (const cudaError_t err = cudaEventCreate(&e); err != cudaSuccess) return cuda_fail("cudaEventCreate", err);
    *event = e;
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_destroy(void* event) {
  return guarded([&] {
    if (event == nullptr) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (const cudaError_t err = cudaEventDestroy(static_cast<cudaEvent_t>(event)); err != cudaSuccess)
      return cuda_fail("cudaEventDestroy", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_record(void* event, void* stream) {
  return guarded([&] {
    if (event == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
    if (const cudaError_t err = cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
      return cuda_fail("cudaEventRecord", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_synchronize(void* event) {
  return guarded([&] {
    if (event == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
    if (const cudaError_t err = cudaEventSynchronize(static_cast<cudaEvent_t>(event)); err != cudaSuccess)
      return cuda_fail("cudaEventSynchronize", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_elapsed_ms(void* start, void* end, float* milliseconds) {
  return guarded([&] {
    if (start == nullptr || end == nullptr || milliseconds == nullptr)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "start, end or milliseconds is NULL");
    if (const cudaError_t err =
            cudaEventElapsedTime(milliseconds, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end));
        err != cudaSuccess)
      return cuda_fail("cudaEventElapsedTime", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc(int64_t bytes, void** pointer) {
  return guarded([&] {
    if (pointer == nullptr || bytes < 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "pointer is NULL or bytes < 0");
    *pointer = nullptr;
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (const cudaError_t err = cudaMalloc(pointer, static_cast<size_t>(bytes)); err != cudaSuccess)
      return cuda_fail(("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str(), err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_free(void* pointer) {
  return guarded([&] {
    if (pointer == nullptr) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (const cudaError_t err = cudaFree(pointer); err != cudaSuccess) return cuda_fail("cudaFree", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_copy_async(void* dst, const void* src, int64_t bytes, void* stream) {
  return guarded([&] {
    if (bytes < 0 || (bytes > 0 && (dst == nullptr || src == nullptr)))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes < 0, or a NULL pointer with bytes > 0");
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (const cudaError_t err = cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault,
                                                static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
      return cuda_fail("cudaMemcpyAsync", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_memset_async(void* dst, int value, int64_t bytes, void* stream) {
  return guarded([&] {
    if (bytes < 0 || (bytes > 0 && dst == nullptr))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes < 0, or a NULL pointer with bytes > 0");
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (const cudaError_t err = cudaMemsetAsync(dst, value, static_cast<size_t>(bytes), static_cast<cudaStream_t>(stream));
        err != cudaSuccess)
      return cuda_fail("cudaMemsetAsync", err);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

}  // extern "C"
