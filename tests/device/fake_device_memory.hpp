/* What the stand-in library's C++ kernel families share (fake_embedding_rows.cpp,
 * fake_embedding_step.cpp): the check, in strict mode ($EMBSCALE_FAKE_STRICT_DEVICE_MEMORY=1,
 * fake_device_memory.cpp), that every buffer a GPU would read on the device is the stand-in's
 * device memory, and the failure it then reports. */
#ifndef EMBSCALE_TESTS_DEVICE_FAKE_DEVICE_MEMORY_HPP
#define EMBSCALE_TESTS_DEVICE_FAKE_DEVICE_MEMORY_HPP

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>

#include "device/device_abi.h"

extern "C" int embscale_fake_strict_device_memory(const void* p, uint64_t bytes);
extern "C" int embscale_fake_fail(int code, const char* text);

namespace embscale::fake {

// True when each (pointer, bytes) lies in device memory (always, outside strict mode); else false
// with `code` the call's failure, naming `call`.
inline bool on_device(std::initializer_list<std::pair<const void*, uint64_t>> buffers, const char* call, int& code) {
  for (const auto& [p, bytes] : buffers)
    if (!embscale_fake_strict_device_memory(p, bytes)) {
      code = embscale_fake_fail(
          EMBSCALE_CUDA_INVALID_ARGUMENT,
          (std::string(call) + ": a buffer in host memory (the kernels read device memory)").c_str());
      return false;
    }
  return true;
}

}  // namespace embscale::fake

#endif /* EMBSCALE_TESTS_DEVICE_FAKE_DEVICE_MEMORY_HPP */
