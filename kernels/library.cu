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

namespace {

// EMBSCALE_CUDA_OK, or the CUDA error as the call's code and detail.
int checked(cudaError_t err, const char* what) {
  return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail(what, err);
}

// Makes a CUDA object (a Handle: cudaStream_t, cudaEvent_t) with `create` and hands it out as void*.
template <class Handle, class Create> int created(void** out, const char* name, Create create, const char* what) {
  if (out == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, std::string(name) + " is NULL");
  Handle handle = nullptr;
  if (const int rc = checked(create(&handle), what); rc != EMBSCALE_CUDA_OK) return rc;
  *out = handle;
  return static_cast<int>(EMBSCALE_CUDA_OK);
}

}  // namespace

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_abi_version(void) { return EMBSCALE_CUDA_ABI_VERSION; }

EMBSCALE_CUDA_EXPORT const char* embscale_cuda_error_string(int code) { return embscale_cuda_code_text(code); }

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
  return guarded([&] { return checked(cudaSetDevice(device), "cudaSetDevice"); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_get_device(int* device) {
  return guarded([&] {
    if (device == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "device is NULL");
    return checked(cudaGetDevice(device), "cudaGetDevice");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_device_properties(int device, char* name, int64_t name_bytes, int* cc_major,
                                                         int* cc_minor, int64_t* memory_bytes) {
  return guarded([&] {
    if (name != nullptr && name_bytes <= 0)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "name_bytes must be > 0 with a name buffer");
    cudaDeviceProp prop{};
    if (const int rc = checked(cudaGetDeviceProperties(&prop, device), "cudaGetDeviceProperties"); rc != 0) return rc;
    if (name != nullptr) {
      std::strncpy(name, prop.name, static_cast<std::size_t>(name_bytes - 1));
      name[name_bytes - 1] = '\0';
    }
    if (cc_major != nullptr) *cc_major = prop.major;
    if (cc_minor != nullptr) *cc_minor = prop.minor;
    if (memory_bytes != nullptr) *memory_bytes = static_cast<int64_t>(prop.totalGlobalMem);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

// The families this library was built with: kernel_families.h, the same list the loader reads.
EMBSCALE_CUDA_EXPORT int embscale_cuda_family_version(const char* family, int* version) {
  return guarded([&] {
    if (family == nullptr || version == nullptr)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "family or version is NULL");
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
    return created<cudaStream_t>(
        stream, "stream", [](cudaStream_t* s) { return cudaStreamCreateWithFlags(s, cudaStreamNonBlocking); },
        "cudaStreamCreateWithFlags");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_destroy(void* stream) {
  return guarded([&] {
    return stream == nullptr ? static_cast<int>(EMBSCALE_CUDA_OK)
                             : checked(cudaStreamDestroy(static_cast<cudaStream_t>(stream)), "cudaStreamDestroy");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_stream_synchronize(void* stream) {
  return guarded(
      [&] { return checked(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)), "cudaStreamSynchronize"); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_create(void** event) {
  return guarded([&] {
    return created<cudaEvent_t>(
        event, "event", [](cudaEvent_t* e) { return cudaEventCreate(e); }, "cudaEventCreate");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_destroy(void* event) {
  return guarded([&] {
    return event == nullptr ? static_cast<int>(EMBSCALE_CUDA_OK)
                            : checked(cudaEventDestroy(static_cast<cudaEvent_t>(event)), "cudaEventDestroy");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_record(void* event, void* stream) {
  return guarded([&] {
    if (event == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
    return checked(cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)),
                   "cudaEventRecord");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_synchronize(void* event) {
  return guarded([&] {
    if (event == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event is NULL");
    return checked(cudaEventSynchronize(static_cast<cudaEvent_t>(event)), "cudaEventSynchronize");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_query(void* event, int* done) {
  return guarded([&] {
    if (event == nullptr || done == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "event or done is NULL");
    const cudaError_t err = cudaEventQuery(static_cast<cudaEvent_t>(event));
    *done = err == cudaSuccess ? 1 : 0;
    if (err == cudaErrorNotReady) {
      // Not an error: cleared when it is what the runtime holds as the last error, so that it does not
      // surface in a later call; an earlier launch's error stays for that call to report.
      if (cudaPeekAtLastError() == cudaErrorNotReady) (void)cudaGetLastError();
      return static_cast<int>(EMBSCALE_CUDA_OK);
    }
    return checked(err, "cudaEventQuery");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_event_elapsed_ms(void* start, void* end, float* milliseconds) {
  return guarded([&] {
    if (start == nullptr || end == nullptr || milliseconds == nullptr)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "start, end or milliseconds is NULL");
    return checked(cudaEventElapsedTime(milliseconds, static_cast<cudaEvent_t>(start), static_cast<cudaEvent_t>(end)),
                   "cudaEventElapsedTime");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc(int64_t bytes, void** pointer) {
  return guarded([&] {
    if (pointer == nullptr || bytes < 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "pointer is NULL or bytes < 0");
    *pointer = nullptr;
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    return checked(cudaMalloc(pointer, static_cast<size_t>(bytes)),
                   ("cudaMalloc of " + std::to_string(bytes) + " bytes").c_str());
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_free(void* pointer) {
  return guarded(
      [&] { return pointer == nullptr ? static_cast<int>(EMBSCALE_CUDA_OK) : checked(cudaFree(pointer), "cudaFree"); });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_malloc_host(int64_t bytes, void** pointer) {
  return guarded([&] {
    if (pointer == nullptr || bytes < 0) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "pointer is NULL or bytes < 0");
    *pointer = nullptr;
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    return checked(cudaMallocHost(pointer, static_cast<std::size_t>(bytes)), "cudaMallocHost");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_free_host(void* pointer) {
  return guarded([&] {
    return pointer == nullptr ? static_cast<int>(EMBSCALE_CUDA_OK) : checked(cudaFreeHost(pointer), "cudaFreeHost");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_copy_async(void* dst, const void* src, int64_t bytes, void* stream) {
  return guarded([&] {
    if (bytes < 0 || (bytes > 0 && (dst == nullptr || src == nullptr)))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes < 0, or a NULL pointer with bytes > 0");
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    return checked(
        cudaMemcpyAsync(dst, src, static_cast<size_t>(bytes), cudaMemcpyDefault, static_cast<cudaStream_t>(stream)),
        "cudaMemcpyAsync");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_memset_async(void* dst, int value, int64_t bytes, void* stream) {
  return guarded([&] {
    if (bytes < 0 || (bytes > 0 && dst == nullptr))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes < 0, or a NULL pointer with bytes > 0");
    if (bytes == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    return checked(cudaMemsetAsync(dst, value, static_cast<size_t>(bytes), static_cast<cudaStream_t>(stream)),
                   "cudaMemsetAsync");
  });
}

}  // extern "C"
