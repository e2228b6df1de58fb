// Run-time access to libembscale_cuda.so (kernels/): loaded with dlopen when a run asks for the
// GPU, so libembscale and the CLI never link CUDA and run on CPU-only nodes. This file and its
// .cpp include no CUDA header; they speak the plain C ABI of kernels/embscale_cuda_api.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

namespace embscale::embedding {

class CudaBackend {
 public:
  struct Versions {
    int runtime = 0;  // CUDA runtime the library was built with, 1000 * major + 10 * minor
    int driver = 0;   // CUDA version the installed driver supports; 0 without a driver
  };

  // Finds and loads libembscale_cuda.so and checks its ABI version. Where it looks:
  //   1. $EMBSCALE_CUDA_LIBRARY when set and not empty (a file path), and nowhere else;
  //   2. the folder of the running executable (/proc/self/exe), then ../lib beside it;
  //   3. the copy in the build tree this libembscale was configured with (when built with CUDA);
  //   4. the dynamic loader's search path (LD_LIBRARY_PATH, ld.so.cache).
  // Returns nullopt when none loads; then *why_not (when given) lists each place tried and why
  // it failed. Loading needs no GPU: on a CPU-only node it succeeds and device_count() is 0.
  // A loaded library stays loaded until the process exits (unloading the CUDA runtime while
  // the process may still hold device state is unsafe).
  static std::optional<CudaBackend> load(std::string* why_not = nullptr);

  const std::string& path() const noexcept { return path_; }
  int abi_version() const noexcept;
  Versions versions() const;

  // Number of CUDA devices, 0 when there is none; then *why_none (when given) holds the CUDA
  // runtime's reason, e.g. "cudaGetDeviceCount: no CUDA-capable device is detected".
  int device_count(std::string* why_none = nullptr) const;

  // out[i, :] = table[rows[i], :] computed on the current GPU from host memory (copies in and
  // out, synchronous). table: row-major [num_rows, dim]; out: [rows.size(), dim]. Throws
  // embscale::Error when there is no GPU, a CUDA call fails, or an index is outside
  // [0, num_rows) (naming the first such position).
  void gather_rows_host(std::span<const float> table, std::size_t dim,
                        std::span<const std::int64_t> rows, std::span<float> out) const;

 private:
  using AbiVersionFn = int (*)();
  using ErrorStringFn = const char* (*)(int);
  using LastErrorDetailFn = const char* (*)();
  using DeviceCountFn = int (*)(int*);
  using VersionsFn = int (*)(int*, int*);
  using GatherRowsHostFn = int (*)(const float*, std::int64_t, std::int64_t, const std::int64_t*,
                                   std::int64_t, float*);

  CudaBackend() = default;
  static std::optional<CudaBackend> open(const std::string& path, std::string& why_not);
  std::string describe(int code) const;

  std::string path_;
  AbiVersionFn abi_version_ = nullptr;
  ErrorStringFn error_string_ = nullptr;
  LastErrorDetailFn last_error_detail_ = nullptr;
  DeviceCountFn device_count_ = nullptr;
  VersionsFn versions_ = nullptr;
  GatherRowsHostFn gather_rows_host_ = nullptr;
};

}  // namespace embscale::embedding
