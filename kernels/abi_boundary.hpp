// What every kernel family of libembscale_cuda.so shares where its entry points meet the C ABI of
// device/device_abi.h: the per-thread detail of the last failure (one for the whole library, so
// embscale_cuda_last_error_detail() sees a failure of any family), return codes built with it,
// and the guard that keeps exceptions from crossing the ABI. Defined in library.cu.
#pragma once

#include <cuda_runtime.h>

#include <new>
#include <string>

#include "device/device_abi.h"

namespace embscale::cuda {

// The calling thread's detail of its last failure; cleared by guarded() at every entry.
std::string& last_error_detail();

// Records detail and returns code: `return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "...")`.
int fail(int code, const std::string& detail);

// EMBSCALE_CUDA_CUDA_ERROR with "<what>: <error name>: <error string>" as the detail.
int cuda_fail(const char* what, cudaError_t err);

// *count = the number of CUDA devices; EMBSCALE_CUDA_NO_DEVICE (count 0, the runtime's reason in
// the detail) when the runtime reports an error or counts none.
int device_count(int* count);

// Every exported function runs its body through this: no exception crosses the C ABI.
template <typename Body> int guarded(Body&& body) noexcept {
  try {
    last_error_detail().clear();
    return body();
  } catch (const std::bad_alloc&) {
    return EMBSCALE_CUDA_CUDA_ERROR;  // the detail may be unusable; the code says enough
  } catch (...) {
    return EMBSCALE_CUDA_CUDA_ERROR;
  }
}

}  // namespace embscale::cuda
