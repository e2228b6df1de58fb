// The device seam of libembscale: run-time access to libembscale_cuda.so (kernels/), the one
// library that holds embscale's GPU code. It is loaded with dlopen when a run asks for the GPU,
// so libembscale and the CLI never link CUDA and run on CPU-only nodes. This header and its
// sources include no CUDA header; they speak the plain C ABI of device/device_abi.h.
//
// Every GPU user in lib/ (the embedding layers, a device KV table, an NCCL communicator) goes
// through one DeviceLibrary: it holds a typed pointer for every function of the ABI and turns a
// failing return code into embscale::Error. What a user does with the device (which kernels,
// which buffers) stays in the user's own part (e.g. embedding/cuda_backend.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "device/device_abi.h"
#include "device/kernel_families.h"

namespace embscale::device {

// One typed pointer per function of the core (EMBSCALE_DEVICE_CORE_FUNCTIONS) and of every
// kernel family (EMBSCALE_DEVICE_KERNEL_FAMILIES), named as the symbol without its embscale_cuda_
// prefix (gather_rows is embscale_cuda_gather_rows). Their types come from the C declarations,
// so the table cannot drift from the ABI. In a loaded DeviceLibrary the core's are never null; a
// family's are set when the family is available (DeviceLibrary::kernels).
struct DeviceFunctions {
#define EMBSCALE_DEVICE_FUNCTION_POINTER(name) decltype(&::embscale_cuda_##name) name = nullptr;
#define EMBSCALE_DEVICE_FAMILY_POINTERS(family, version, functions) functions(EMBSCALE_DEVICE_FUNCTION_POINTER)
  EMBSCALE_DEVICE_CORE_FUNCTIONS(EMBSCALE_DEVICE_FUNCTION_POINTER)
  EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_DEVICE_FAMILY_POINTERS)
#undef EMBSCALE_DEVICE_FAMILY_POINTERS
#undef EMBSCALE_DEVICE_FUNCTION_POINTER
};

// The kernel families of device/kernel_families.h, in its order.
enum class KernelFamily : std::size_t {
#define EMBSCALE_DEVICE_FAMILY_ENUM(family, version, functions) family,
  EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_DEVICE_FAMILY_ENUM)
#undef EMBSCALE_DEVICE_FAMILY_ENUM
};
inline constexpr std::size_t kKernelFamilies = 0
#define EMBSCALE_DEVICE_FAMILY_COUNT(family, version, functions) +1
    EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_DEVICE_FAMILY_COUNT)
#undef EMBSCALE_DEVICE_FAMILY_COUNT
    ;
// "row_gather" for KernelFamily::row_gather.
std::string_view family_name(KernelFamily family) noexcept;

class DeviceLibrary {
 public:
  struct Versions {
    int runtime = 0;  // CUDA runtime the library was built with, 1000 * major + 10 * minor
    int driver = 0;   // CUDA version the installed driver supports; 0 without a driver
  };

  // Loads the library from the first of library_search_places() (device/library_search.hpp)
  // that holds a usable one. Throws embscale::Error naming every place tried, why each failed,
  // and what to do (set EMBSCALE_CUDA_LIBRARY, or build with CUDA). Loading needs no GPU: on a
  // CPU-only node it succeeds and device_count() is 0.
  static DeviceLibrary load();

  // Loads exactly this file (a path with '/', or a bare name for dlopen's search). Throws
  // embscale::Error naming the path and what is wrong: dlopen's reason, the core ABI version, or
  // every core function the file does not export. A kernel family the file lacks, holds in
  // another version, or exports only in part does not stop the load: kernels() refuses it.
  // A loaded library stays loaded until the process exits (unloading the static CUDA runtime
  // while the process may still hold device state is unsafe), so copies of a DeviceLibrary are
  // cheap and never dangle.
  static DeviceLibrary open(const std::string& path);

  // The file the dynamic loader picked (resolved, for a name found on its search path).
  const std::string& path() const noexcept { return path_; }
  // The core's functions (streams, events, memory, devices). A family's functions are reached
  // through kernels(), which checks that the family is there.
  const DeviceFunctions& functions() const noexcept { return functions_; }
  // The functions, once `family` is known to be available in its compiled version; else
  // embscale::Error "<path>: kernel family <name>: <why>" (absent, version k where this embscale
  // needs m, or lacking named functions).
  const DeviceFunctions& kernels(KernelFamily family) const;
  // Empty when `family` is available, else why not (kernels()'s reason).
  const std::string& family_problem(KernelFamily family) const noexcept {
    return family_problems_[static_cast<std::size_t>(family)];
  }

  int abi_version() const { return functions_.abi_version(); }
  Versions versions() const;

  // Number of CUDA devices, 0 when there is none; then *why_none (when given) holds the CUDA
  // runtime's reason, e.g. "no CUDA device: cudaGetDeviceCount: no CUDA-capable device ...".
  int device_count(std::string* why_none = nullptr) const;

  // What a report records of a GPU (embscale_cuda_device_properties). Throws Error when the
  // runtime cannot say (no such device).
  struct DeviceProperties {
    std::string name;  // "NVIDIA H200"
    int compute_major = 0, compute_minor = 0;
    std::int64_t memory_bytes = 0;
  };
  DeviceProperties properties(int device) const;

  // The code's text and the library's detail of the last failure on this thread, e.g.
  // "row index out of range: rows[3] = 97 is outside [0, 97) ...".
  std::string describe(int code) const;

  // Returns when code is EMBSCALE_CUDA_OK; else throws embscale::Error
  // "<what> (<path>): <describe(code)>". Call it right after the call that returned code (the
  // detail is per thread and replaced by the next call).
  void check(int code, std::string_view what) const;

 private:
  DeviceLibrary() = default;
  // open() without the throw: nullopt and the reason (without the path) in why_not.
  static std::optional<DeviceLibrary> try_open(const std::string& path, std::string& why_not);

  std::string path_;
  DeviceFunctions functions_;
  std::array<std::string, kKernelFamilies> family_problems_;
};

}  // namespace embscale::device
