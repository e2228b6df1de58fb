// libembscale_cuda.so: the owner's row gather (out[i, :] = table[rows[i], :]) and its entry
// points of the C ABI of device/device_abi.h (the library-wide ones are in library.cu).
//
// Kernel shape: a group of G threads copies one row (G a power of two <= 32, the smallest that
// covers the row's vectors, so short rows do not leave most of a warp idle), groups stride over
// the rows. A row moves in 16-byte vectors (float4) when dim % 4 == 0 and both table and out are
// 16-byte aligned, else in float2 or single floats. An index outside [0, num_rows) is never
// dereferenced: its output row is zero-filled and the smallest such position is folded into a
// device word with atomicMin, which the host reads to report it.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>

#include "abi_boundary.hpp"
#include "device/families/row_gather.h"

namespace {

using embscale::cuda::cuda_fail;
using embscale::cuda::fail;

constexpr int kBlockThreads = 256;
constexpr unsigned long long kNoBadIndex = std::numeric_limits<unsigned long long>::max();
static_assert(sizeof(unsigned long long) == sizeof(std::uint64_t));

template <typename Vec> __device__ __forceinline__ Vec zero_vec();
template <> __device__ __forceinline__ float zero_vec<float>() { return 0.0f; }
template <> __device__ __forceinline__ float2 zero_vec<float2>() { return make_float2(0.0f, 0.0f); }
template <> __device__ __forceinline__ float4 zero_vec<float4>() { return make_float4(0.0f, 0.0f, 0.0f, 0.0f); }

// kGroup threads per row; vecs = dim / (floats per Vec).
// (kBlockThreads, 8): 8 blocks of 256 = 2048 threads, a full Hopper SM; ptxas then fits every
// instantiation in 32 registers without spilling (39 without the hint), so more loads are in flight.
template <typename Vec, int kGroup>
__global__ void __launch_bounds__(kBlockThreads, 8)
    gather_rows_kernel(const Vec* __restrict__ table, std::int64_t num_rows, std::int64_t vecs,
                       const std::int64_t* __restrict__ rows, std::int64_t n, Vec* __restrict__ out,
                       unsigned long long* __restrict__ first_bad) {
  const int lane = static_cast<int>(threadIdx.x) % kGroup;
  const std::int64_t thread = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t groups = static_cast<std::int64_t>(gridDim.x) * blockDim.x / kGroup;
  for (std::int64_t i = thread / kGroup; i < n; i += groups) {
    const std::int64_t r = __ldg(rows + i);
    Vec* dst = out + i * vecs;
    if (r < 0 || r >= num_rows) [[unlikely]] {
      if (lane == 0) atomicMin(first_bad, static_cast<unsigned long long>(i));
      for (std::int64_t j = lane; j < vecs; j += kGroup) dst[j] = zero_vec<Vec>();
      continue;
    }
    const Vec* src = table + r * vecs;
#pragma unroll 4
    for (std::int64_t j = lane; j < vecs; j += kGroup) dst[j] = __ldg(src + j);
  }
}

template <typename Vec, int kGroup>
cudaError_t launch_group(const float* table, std::int64_t num_rows, std::int64_t dim, const std::int64_t* rows,
                         std::int64_t n, float* out, unsigned long long* first_bad, cudaStream_t stream,
                         int max_blocks) {
  constexpr std::int64_t kFloats = sizeof(Vec) / sizeof(float);
  const std::int64_t rows_per_block = kBlockThreads / kGroup;
  std::int64_t blocks = (n + rows_per_block - 1) / rows_per_block;
  if (blocks > max_blocks) blocks = max_blocks;
  gather_rows_kernel<Vec, kGroup><<<static_cast<unsigned>(blocks), kBlockThreads, 0, stream>>>(
      reinterpret_cast<const Vec*>(table), num_rows, dim / kFloats, rows, n, reinterpret_cast<Vec*>(out), first_bad);
  return cudaGetLastError();
}

template <typename Vec>
cudaError_t launch_vec(const float* table, std::int64_t num_rows, std::int64_t dim, const std::int64_t* rows,
                       std::int64_t n, float* out, unsigned long long* first_bad, cudaStream_t stream, int max_blocks) {
  const std::int64_t vecs = dim / static_cast<std::int64_t>(sizeof(Vec) / sizeof(float));
  if (vecs <= 1) return launch_group<Vec, 1>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  if (vecs <= 2) return launch_group<Vec, 2>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  if (vecs <= 4) return launch_group<Vec, 4>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  if (vecs <= 8) return launch_group<Vec, 8>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  if (vecs <= 16) return launch_group<Vec, 16>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  return launch_group<Vec, 32>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
}

bool aligned(const void* p, std::uintptr_t bytes) { return reinterpret_cast<std::uintptr_t>(p) % bytes == 0; }

int check_args(const float* table, std::int64_t num_rows, std::int64_t dim, const std::int64_t* rows, std::int64_t n,
               const float* out) {
  if (num_rows < 0 || dim < 0 || n < 0)
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "negative size: num_rows = " + std::to_string(num_rows) +
                                                    ", dim = " + std::to_string(dim) + ", n = " + std::to_string(n));
  if (n > 0 && (rows == nullptr || (dim > 0 && (out == nullptr || (num_rows > 0 && table == nullptr)))))
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer with n = " + std::to_string(n));
  constexpr std::int64_t kMaxElems = std::numeric_limits<std::int64_t>::max() / 4;
  if (dim > 0 && (n > kMaxElems / dim || num_rows > kMaxElems / dim))
    return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "table or output size overflows 64 bits");
  return EMBSCALE_CUDA_OK;
}

int enqueue_gather(const float* table, std::int64_t num_rows, std::int64_t dim, const std::int64_t* rows,
                   std::int64_t n, float* out, unsigned long long* first_bad, cudaStream_t stream) {
  int device = 0;
  if (const cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) return cuda_fail("cudaGetDevice", err);
  int sms = 0;
  if (const cudaError_t err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device); err != cudaSuccess)
    return cuda_fail("cudaDeviceGetAttribute(MultiProcessorCount)", err);
  // Enough blocks to fill every multiprocessor several times over; the kernel strides beyond.
  const int max_blocks = sms * 32;
  cudaError_t err;
  if (dim % 4 == 0 && aligned(table, 16) && aligned(out, 16))
    err = launch_vec<float4>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  else if (dim % 2 == 0 && aligned(table, 8) && aligned(out, 8))
    err = launch_vec<float2>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  else err = launch_vec<float>(table, num_rows, dim, rows, n, out, first_bad, stream, max_blocks);
  if (err != cudaSuccess) return cuda_fail("gather_rows_kernel launch", err);
  return EMBSCALE_CUDA_OK;
}

// Device memory freed on scope exit (stream-ordered when it came from cudaMallocAsync).
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (ptr_ == nullptr) return;
    if (async_) cudaFreeAsync(ptr_, stream_);
    else cudaFree(ptr_);
  }
  cudaError_t allocate(std::size_t bytes) {
    async_ = false;
    return cudaMalloc(&ptr_, bytes == 0 ? 1 : bytes);
  }
  // Stream-ordered allocation where the device supports memory pools, else cudaMalloc.
  cudaError_t allocate_async(std::size_t bytes, cudaStream_t stream) {
    const cudaError_t err = cudaMallocAsync(&ptr_, bytes, stream);
    if (err == cudaSuccess) {
      async_ = true;
      stream_ = stream;
      return err;
    }
    if (err != cudaErrorNotSupported) return err;
    cudaGetLastError();  // clear the non-sticky error
    return allocate(bytes);
  }
  template <typename T> T* get() const noexcept { return static_cast<T*>(ptr_); }

 private:
  void* ptr_ = nullptr;
  bool async_ = false;
  cudaStream_t stream_ = nullptr;
};

int report_bad_index(const std::int64_t* d_rows, unsigned long long first_bad, std::int64_t num_rows) {
  const auto i = static_cast<std::int64_t>(first_bad);
  std::int64_t value = 0;
  std::string what = "rows[" + std::to_string(i) + "]";
  if (cudaMemcpy(&value, d_rows + i, sizeof value, cudaMemcpyDeviceToHost) == cudaSuccess)
    what += " = " + std::to_string(value);
  return fail(EMBSCALE_CUDA_BAD_INDEX, what + " is outside [0, " + std::to_string(num_rows) +
                                           ") (the first such position; its output row is zero)");
}

int gather_sync(const float* d_table, std::int64_t num_rows, std::int64_t dim, const std::int64_t* d_rows,
                std::int64_t n, float* d_out, cudaStream_t stream) {
  DeviceBuffer flag;
  if (const cudaError_t err = flag.allocate_async(sizeof(unsigned long long), stream); err != cudaSuccess)
    return cuda_fail("allocating the bad-index flag", err);
  if (const cudaError_t err = cudaMemsetAsync(flag.get<void>(), 0xff, sizeof(unsigned long long), stream);
      err != cudaSuccess)
    return cuda_fail("cudaMemsetAsync", err);
  if (const int rc = enqueue_gather(d_table, num_rows, dim, d_rows, n, d_out, flag.get<unsigned long long>(), stream);
      rc != EMBSCALE_CUDA_OK)
    return rc;
  unsigned long long first_bad = kNoBadIndex;
  if (const cudaError_t err =
          cudaMemcpyAsync(&first_bad, flag.get<void>(), sizeof first_bad, cudaMemcpyDeviceToHost, stream);
      err != cudaSuccess)
    return cuda_fail("cudaMemcpyAsync(bad-index flag)", err);
  if (const cudaError_t err = cudaStreamSynchronize(stream); err != cudaSuccess)
    return cuda_fail("cudaStreamSynchronize after gather_rows_kernel", err);
  if (first_bad != kNoBadIndex) return report_bad_index(d_rows, first_bad, num_rows);
  return EMBSCALE_CUDA_OK;
}

}  // namespace

using embscale::cuda::guarded;

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows(const float* d_table, int64_t num_rows, int64_t dim,
                                                   const int64_t* d_rows, int64_t n, float* d_out, void* stream) {
  return guarded([&] {
    if (const int rc = check_args(d_table, num_rows, dim, d_rows, n, d_out); rc != EMBSCALE_CUDA_OK) return rc;
    if (n == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    return gather_sync(d_table, num_rows, dim, d_rows, n, d_out, static_cast<cudaStream_t>(stream));
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_async(const float* d_table, int64_t num_rows, int64_t dim,
                                                         const int64_t* d_rows, int64_t n, float* d_out,
                                                         uint64_t* d_first_bad, void* stream) {
  return guarded([&] {
    if (const int rc = check_args(d_table, num_rows, dim, d_rows, n, d_out); rc != EMBSCALE_CUDA_OK) return rc;
    if (n > 0 && d_first_bad == nullptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "d_first_bad is NULL");
    if (n == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    return enqueue_gather(d_table, num_rows, dim, d_rows, n, d_out, reinterpret_cast<unsigned long long*>(d_first_bad),
                          static_cast<cudaStream_t>(stream));
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_gather_rows_host(const float* table, int64_t num_rows, int64_t dim,
                                                        const int64_t* rows, int64_t n, float* out) {
  return guarded([&] {
    if (const int rc = check_args(table, num_rows, dim, rows, n, out); rc != EMBSCALE_CUDA_OK) return rc;
    if (n == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    int count = 0;
    if (const int rc = embscale::cuda::device_count(&count); rc != EMBSCALE_CUDA_OK) return rc;
    const auto table_bytes = static_cast<std::size_t>(num_rows) * static_cast<std::size_t>(dim) * sizeof(float);
    const auto rows_bytes = static_cast<std::size_t>(n) * sizeof(std::int64_t);
    const auto out_bytes = static_cast<std::size_t>(n) * static_cast<std::size_t>(dim) * sizeof(float);
    DeviceBuffer d_table, d_rows, d_out;
    if (const cudaError_t err = d_table.allocate(table_bytes); err != cudaSuccess)
      return cuda_fail("cudaMalloc(table)", err);
    if (const cudaError_t err = d_rows.allocate(rows_bytes); err != cudaSuccess)
      return cuda_fail("cudaMalloc(rows)", err);
    if (const cudaError_t err = d_out.allocate(out_bytes); err != cudaSuccess) return cuda_fail("cudaMalloc(out)", err);
    if (table_bytes > 0) {
      if (const cudaError_t err = cudaMemcpy(d_table.get<void>(), table, table_bytes, cudaMemcpyHostToDevice);
          err != cudaSuccess)
        return cuda_fail("cudaMemcpy(table)", err);
    }
    if (const cudaError_t err = cudaMemcpy(d_rows.get<void>(), rows, rows_bytes, cudaMemcpyHostToDevice);
        err != cudaSuccess)
      return cuda_fail("cudaMemcpy(rows)", err);
    const int rc =
        gather_sync(d_table.get<float>(), num_rows, dim, d_rows.get<std::int64_t>(), n, d_out.get<float>(), nullptr);
    if (rc != EMBSCALE_CUDA_OK && rc != EMBSCALE_CUDA_BAD_INDEX) return rc;
    const std::string detail = embscale::cuda::last_error_detail();
    if (out_bytes > 0) {
      if (const cudaError_t err = cudaMemcpy(out, d_out.get<void>(), out_bytes, cudaMemcpyDeviceToHost);
          err != cudaSuccess)
        return cuda_fail("cudaMemcpy(out)", err);
    }
    embscale::cuda::last_error_detail() = detail;
    return rc;
  });
}

}  // extern "C"
