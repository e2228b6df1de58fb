// libembscale_cuda.so: the GPU KV table's batch calls (device/families/kv_table.h). The table's
// logic is lib/kv/portable/'s, the same source the host runs in the CPU tests; this file only
// groups a batch by bucket (a stable radix sort of (bucket, position) with CUB), launches one tile
// per group, and moves entries on a rehash.
//
// Why one tile per bucket group: the keys of one bucket run one after another in input order
// (BatchRunner), so a batch keeps the CPU table's sequential semantics exactly, duplicates and
// evictions included, with no lock: buckets share no slot, row or admission bank
// (lib/kv/portable/batch_ref.hpp). Parallelism is the number of distinct buckets a batch touches:
// 2^20 keys over 2^20 buckets touch about 0.63 x 2^20 of them.
#include <cooperative_groups.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_select.cuh>
#include <string>

#include "abi_boundary.hpp"
#include "device/families/kv_table.h"
#include "device_tile.cuh"
#include "kv/portable/batch_ref.hpp"

namespace {

using embscale::cuda::cuda_fail;
using embscale::cuda::fail;
using embscale::cuda::guarded;
namespace portable = embscale::kv::portable;

constexpr unsigned kBlockThreads = 128;
constexpr std::uint64_t kScratchAlign = 256;

std::uint64_t aligned(std::uint64_t bytes) { return (bytes + kScratchAlign - 1) / kScratchAlign * kScratchAlign; }

// ---- grouping ----

__global__ void bucket_tags_kernel(const std::uint64_t* __restrict__ keys, std::uint64_t n, std::uint64_t mask,
                                   std::uint32_t* __restrict__ tags, std::uint32_t* __restrict__ positions) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    tags[i] = static_cast<std::uint32_t>(embscale::mix64(keys[i]) & mask);
    positions[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void group_starts_kernel(const std::uint32_t* __restrict__ sorted_tags, std::uint64_t n,
                                    std::uint8_t* __restrict__ starts, std::uint32_t* __restrict__ index) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    starts[i] = i == 0 || sorted_tags[i] != sorted_tags[i - 1];
    index[i] = static_cast<std::uint32_t>(i);
  }
}

__global__ void close_offsets_kernel(std::uint32_t* offsets, const std::uint64_t* groups, std::uint64_t n) {
  offsets[*groups] = static_cast<std::uint32_t>(n);
}

// The scratch of a grouping of n keys, carved in this order: tags, sorted tags, positions, start
// flags, indices (n each), then CUB's temporary storage (the larger of the sort's and the
// selection's).
struct GroupScratch {
  std::uint64_t cub_bytes = 0;
  std::uint64_t total = 0;
};

GroupScratch group_scratch(std::uint64_t n) {
  GroupScratch s;
  std::size_t sort_bytes = 0, select_bytes = 0;
  cub::DeviceRadixSort::SortPairs(nullptr, sort_bytes, static_cast<const std::uint32_t*>(nullptr),
                                  static_cast<std::uint32_t*>(nullptr), static_cast<const std::uint32_t*>(nullptr),
                                  static_cast<std::uint32_t*>(nullptr), static_cast<std::uint32_t>(n));
  cub::DeviceSelect::Flagged(nullptr, select_bytes, static_cast<const std::uint32_t*>(nullptr),
                             static_cast<const std::uint8_t*>(nullptr), static_cast<std::uint32_t*>(nullptr),
                             static_cast<std::uint64_t*>(nullptr), static_cast<std::uint32_t>(n));
  s.cub_bytes = aligned(sort_bytes > select_bytes ? sort_bytes : select_bytes);
  s.total = 4 * aligned(n * sizeof(std::uint32_t)) + aligned(n) + s.cub_bytes;
  return s;
}

// The current device's multiprocessor count, asked once per device per thread.
int multiprocessors() {
  thread_local int cached_device = -1, cached_sms = 0;
  int device = 0;
  cudaGetDevice(&device);
  if (device != cached_device) {
    cudaDeviceGetAttribute(&cached_sms, cudaDevAttrMultiProcessorCount, device);
    cached_device = device;
  }
  return cached_sms;
}

int grid_for(std::uint64_t threads) {
  const int sms = multiprocessors();
  const std::uint64_t most = static_cast<std::uint64_t>(sms > 0 ? sms : 1) * 16;
  const std::uint64_t blocks = (threads + kBlockThreads - 1) / kBlockThreads;
  return static_cast<int>(blocks < 1 ? 1 : (blocks > most ? most : blocks));
}

// ---- exports ----

__global__ void export_flags_kernel(const portable::TableArrays a, std::uint64_t first, std::uint64_t n,
                                    std::uint64_t min_score, std::uint8_t* __restrict__ flags,
                                    std::uint64_t* __restrict__ slots) {
  for (std::uint64_t i = blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x; i < n;
       i += std::uint64_t{gridDim.x} * blockDim.x) {
    const std::uint64_t slot = first + i;
    flags[i] = portable::holds_key(a.keys[slot]) && a.scores[slot] >= min_score;
    slots[i] = slot;
  }
}

// One warp per selected slot: its key and score by lane 0, its row by every lane.
__global__ void export_gather_kernel(const portable::TableArrays a, const std::uint64_t* __restrict__ selected,
                                     const std::uint64_t* __restrict__ count, std::uint64_t* __restrict__ keys,
                                     std::uint64_t* __restrict__ scores, float* __restrict__ rows) {
  const std::uint64_t n = *count;
  const unsigned lane = threadIdx.x % 32;
  for (std::uint64_t e = (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / 32; e < n;
       e += std::uint64_t{gridDim.x} * blockDim.x / 32) {
    const std::uint64_t slot = selected[e];
    if (lane == 0) {
      keys[e] = a.keys[slot];
      scores[e] = a.scores[slot];
    }
    const float* row = portable::row_of(a, slot);
    for (std::uint32_t d = lane; d < a.row_width; d += 32) rows[e * a.row_width + d] = row[d];
  }
}

// The scratch of an export of n slots: flags, slot indices, selected slots, then CUB's storage.
std::uint64_t export_cub_bytes(std::uint64_t n) {
  std::size_t bytes = 0;
  cub::DeviceSelect::Flagged(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                             static_cast<const std::uint8_t*>(nullptr), static_cast<std::uint64_t*>(nullptr),
                             static_cast<std::uint64_t*>(nullptr), static_cast<std::int64_t>(n));
  return aligned(bytes);
}

std::uint64_t export_scratch_bytes(std::uint64_t n) { return aligned(n) + 2 * aligned(n * 8) + export_cub_bytes(n); }

// ---- batches ----

// One tile of `Lanes` lanes per group, striding over the groups. kFindOnly: the batch is a find,
// known at compile time, so the kernel carries none of the inserting calls' code (the
// initializer's math, the sketch, eviction): fewer registers, more warps in flight.
template <unsigned Lanes, bool kFindOnly>
__global__ void __launch_bounds__(kBlockThreads)
    run_batch_kernel(const portable::TableState state, const portable::BatchRef batch) {
  namespace cg = cooperative_groups;
  const portable::DeviceTile<Lanes> tile(cg::tiled_partition<Lanes>(cg::this_thread_block()));
  portable::BatchRef b = batch;
  if constexpr (kFindOnly) b.op = portable::BatchOp::kFind;
  const std::uint64_t groups = b.order ? (b.group_count ? *b.group_count : b.groups) : b.size;
  const std::uint64_t first = (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / Lanes;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x / Lanes;
  portable::BatchRunner<portable::DeviceTile<Lanes>, portable::DeviceAtomics> runner(state, b);
  for (std::uint64_t g = first; g < groups; g += stride) runner.run_group(tile, g);
}

template <unsigned Lanes>
void launch_batch(int grid, cudaStream_t s, const portable::TableState& state, const portable::BatchRef& batch) {
  if (batch.op == portable::BatchOp::kFind) run_batch_kernel<Lanes, true><<<grid, kBlockThreads, 0, s>>>(state, batch);
  else run_batch_kernel<Lanes, false><<<grid, kBlockThreads, 0, s>>>(state, batch);
}

// One tile per bucket of `from` (lib/kv/portable/table_ref.hpp's TableRef::move_bucket).
template <unsigned Lanes>
__global__ void __launch_bounds__(kBlockThreads)
    rehash_kernel(const portable::TableArrays from, const portable::TableArrays to) {
  namespace cg = cooperative_groups;
  using Tile = portable::DeviceTile<Lanes>;
  const Tile tile(cg::tiled_partition<Lanes>(cg::this_thread_block()));
  const std::uint64_t first = (blockIdx.x * std::uint64_t{blockDim.x} + threadIdx.x) / Lanes;
  const std::uint64_t stride = std::uint64_t{gridDim.x} * blockDim.x / Lanes;
  portable::TableRef<Tile, portable::DeviceAtomics> target(to);
  for (std::uint64_t b = first; b < from.buckets; b += stride) target.move_bucket(tile, from, b);
}

bool power_of_two(std::uint64_t x) { return x != 0 && (x & (x - 1)) == 0; }

// What a table's arrays must satisfy for the kernels: an empty string when they do.
std::string arrays_problem(const portable::TableArrays& a) {
  const std::uint64_t slots = a.buckets * a.bucket_capacity;
  if (!a.keys || !a.scores || !a.digests) return "a null array";
  if (a.row_width > 0 && ((!a.rows && a.near_slots > 0) || (!a.far_rows && a.near_slots < slots)))
    return "null rows (near or far)";
  if (a.near_slots < slots && a.near_slots % a.bucket_capacity != 0)
    return "hybrid rows split inside a bucket (near_slots " + std::to_string(a.near_slots) + ")";
  if (!power_of_two(a.buckets) || a.buckets > (std::uint64_t{1} << 32))
    return "buckets must be a power of two of at most 2^32, got " + std::to_string(a.buckets);
  if (a.bucket_capacity < 16 || a.bucket_capacity % 16 != 0 || (a.bucket_capacity > 16 && a.bucket_capacity % 32 != 0))
    return "bucket_capacity must be 16 or a multiple of 32, got " + std::to_string(a.bucket_capacity);
  return "";
}

unsigned lanes_for(const portable::TableArrays& a) { return a.bucket_capacity >= 32 ? 32u : 16u; }

}  // namespace

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_layout(uint64_t* arrays_bytes, uint64_t* state_bytes,
                                                       uint64_t* batch_bytes) {
  return guarded([&]() -> int {
    if (!arrays_bytes || !state_bytes || !batch_bytes) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
    *arrays_bytes = sizeof(portable::TableArrays);
    *state_bytes = sizeof(portable::TableState);
    *batch_bytes = sizeof(portable::BatchRef);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_group_scratch(uint64_t n, uint64_t* bytes) {
  return guarded([&]() -> int {
    if (!bytes) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
    if (n >= (std::uint64_t{1} << 32)) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "a batch of 2^32 keys or more");
    *bytes = group_scratch(n).total;
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_group(const uint64_t* d_keys, uint64_t n, uint64_t buckets,
                                                      uint32_t* d_order, uint32_t* d_offsets, uint64_t* d_groups,
                                                      void* d_scratch, uint64_t scratch_bytes, void* stream) {
  return guarded([&]() -> int {
    if (!d_offsets || !d_groups) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null offsets or group count");
    if (!power_of_two(buckets) || buckets > (std::uint64_t{1} << 32))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
                  "buckets must be a power of two of at most 2^32, got " + std::to_string(buckets));
    if (n >= (std::uint64_t{1} << 32)) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "a batch of 2^32 keys or more");
    const auto s = static_cast<cudaStream_t>(stream);
    if (n == 0) {
      if (const cudaError_t err = cudaMemsetAsync(d_groups, 0, sizeof(std::uint64_t), s); err != cudaSuccess)
        return cuda_fail("cudaMemsetAsync", err);
      if (const cudaError_t err = cudaMemsetAsync(d_offsets, 0, sizeof(std::uint32_t), s); err != cudaSuccess)
        return cuda_fail("cudaMemsetAsync", err);
      return EMBSCALE_CUDA_OK;
    }
    if (!d_keys || !d_order || !d_scratch) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null keys, order or scratch");
    const GroupScratch need = group_scratch(n);
    if (scratch_bytes < need.total)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
                  "scratch of " + std::to_string(scratch_bytes) + " bytes, " + std::to_string(need.total) + " needed");
    auto* base = static_cast<unsigned char*>(d_scratch);
    const std::uint64_t words = aligned(n * sizeof(std::uint32_t));
    auto* tags = reinterpret_cast<std::uint32_t*>(base);
    auto* sorted_tags = reinterpret_cast<std::uint32_t*>(base + words);
    auto* positions = reinterpret_cast<std::uint32_t*>(base + 2 * words);
    auto* index = reinterpret_cast<std::uint32_t*>(base + 3 * words);
    auto* starts = base + 4 * words;
    void* cub_temp = base + 4 * words + aligned(n);
    std::size_t cub_bytes = need.cub_bytes;
    const int bits = buckets == 1 ? 1 : 64 - __builtin_clzll(buckets - 1);  // log2(buckets)
    const int grid = grid_for(n);
    bucket_tags_kernel<<<grid, kBlockThreads, 0, s>>>(d_keys, n, buckets - 1, tags, positions);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("bucket_tags_kernel", err);
    // LSD radix sort: stable, so a bucket's positions stay in input order.
    if (const cudaError_t err = cub::DeviceRadixSort::SortPairs(cub_temp, cub_bytes, tags, sorted_tags, positions,
                                                                d_order, static_cast<std::uint32_t>(n), 0, bits, s);
        err != cudaSuccess)
      return cuda_fail("cub::DeviceRadixSort::SortPairs", err);
    group_starts_kernel<<<grid, kBlockThreads, 0, s>>>(sorted_tags, n, starts, index);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("group_starts_kernel", err);
    cub_bytes = need.cub_bytes;
    if (const cudaError_t err = cub::DeviceSelect::Flagged(cub_temp, cub_bytes, index, starts, d_offsets, d_groups,
                                                           static_cast<std::uint32_t>(n), s);
        err != cudaSuccess)
      return cuda_fail("cub::DeviceSelect::Flagged", err);
    close_offsets_kernel<<<1, 1, 0, s>>>(d_offsets, d_groups, n);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("close_offsets_kernel", err);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_run(const void* state_ptr, const void* batch_ptr, void* stream) {
  return guarded([&]() -> int {
    if (!state_ptr || !batch_ptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null state or batch");
    const auto& state = *static_cast<const portable::TableState*>(state_ptr);
    const auto& batch = *static_cast<const portable::BatchRef*>(batch_ptr);
    if (const std::string problem = arrays_problem(state.arrays); !problem.empty())
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "table arrays: " + problem);
    if (batch.size == 0) return EMBSCALE_CUDA_OK;
    if (const char* problem = portable::batch_problem(state, batch))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, std::string("batch: ") + problem);
    if (batch.order && !batch.group_count && batch.groups == 0)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "grouped batch without a group count");
    const std::uint64_t groups = batch.order ? (batch.group_count ? batch.size : batch.groups) : batch.size;
    const auto s = static_cast<cudaStream_t>(stream);
    const unsigned lanes = lanes_for(state.arrays);
    const int grid = grid_for(groups * lanes);
    if (lanes == 32) launch_batch<32>(grid, s, state, batch);
    else launch_batch<16>(grid, s, state, batch);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("run_batch_kernel", err);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_export_scratch(uint64_t n, uint64_t* bytes) {
  return guarded([&]() -> int {
    if (!bytes) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
    *bytes = export_scratch_bytes(n);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_export(const void* arrays_ptr, uint64_t first, uint64_t end,
                                                       uint64_t min_score, uint64_t* d_keys, uint64_t* d_scores,
                                                       float* d_rows, uint64_t* d_count, void* d_scratch,
                                                       uint64_t scratch_bytes, void* stream) {
  return guarded([&]() -> int {
    if (!arrays_ptr || !d_count) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null arrays or count");
    const auto& a = *static_cast<const portable::TableArrays*>(arrays_ptr);
    if (const std::string problem = arrays_problem(a); !problem.empty())
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "table arrays: " + problem);
    const std::uint64_t slots = a.buckets * a.bucket_capacity;
    if (first > end || end > slots)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "slots [" + std::to_string(first) + ", " + std::to_string(end) +
                                                      ") outside the table's " + std::to_string(slots));
    const auto s = static_cast<cudaStream_t>(stream);
    const std::uint64_t n = end - first;
    if (n == 0) {
      if (const cudaError_t err = cudaMemsetAsync(d_count, 0, sizeof(std::uint64_t), s); err != cudaSuccess)
        return cuda_fail("cudaMemsetAsync", err);
      return EMBSCALE_CUDA_OK;
    }
    if (!d_keys || !d_scores || (!d_rows && a.row_width > 0) || !d_scratch)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null outputs or scratch");
    if (scratch_bytes < export_scratch_bytes(n))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "scratch of " + std::to_string(scratch_bytes) + " bytes, " +
                                                      std::to_string(export_scratch_bytes(n)) + " needed");
    auto* base = static_cast<unsigned char*>(d_scratch);
    auto* flags = base;
    auto* slot_index = reinterpret_cast<std::uint64_t*>(base + aligned(n));
    auto* selected = reinterpret_cast<std::uint64_t*>(base + aligned(n) + aligned(n * 8));
    void* cub_temp = base + aligned(n) + 2 * aligned(n * 8);
    std::size_t cub_bytes = export_cub_bytes(n);
    export_flags_kernel<<<grid_for(n), kBlockThreads, 0, s>>>(a, first, n, min_score, flags, slot_index);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("export_flags_kernel", err);
    // A stable selection: the entries stay in slot order.
    if (const cudaError_t err = cub::DeviceSelect::Flagged(cub_temp, cub_bytes, slot_index, flags, selected, d_count,
                                                           static_cast<std::int64_t>(n), s);
        err != cudaSuccess)
      return cuda_fail("cub::DeviceSelect::Flagged (export)", err);
    export_gather_kernel<<<grid_for(n * 32), kBlockThreads, 0, s>>>(a, selected, d_count, d_keys, d_scores, d_rows);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("export_gather_kernel", err);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_host_alloc(uint64_t bytes, void** pointer) {
  return guarded([&]() -> int {
    if (!pointer) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null pointer");
    *pointer = nullptr;
    if (bytes == 0) return EMBSCALE_CUDA_OK;
    // Mapped (the GPU reads it over the bus at the same address: unified addressing) and portable
    // (every context sees it).
    if (const cudaError_t err = cudaHostAlloc(pointer, bytes, cudaHostAllocMapped | cudaHostAllocPortable);
        err != cudaSuccess)
      return fail(EMBSCALE_CUDA_CUDA_ERROR, "cudaHostAlloc of " + std::to_string(bytes) +
                                                " bytes (mapped): " + std::string(cudaGetErrorString(err)));
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_host_free(void* pointer) {
  return guarded([&]() -> int {
    if (pointer)
      if (const cudaError_t err = cudaFreeHost(pointer); err != cudaSuccess) return cuda_fail("cudaFreeHost", err);
    return EMBSCALE_CUDA_OK;
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_kv_table_rehash(const void* from_ptr, const void* to_ptr, void* stream) {
  return guarded([&]() -> int {
    if (!from_ptr || !to_ptr) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "null arrays");
    const auto& from = *static_cast<const portable::TableArrays*>(from_ptr);
    const auto& to = *static_cast<const portable::TableArrays*>(to_ptr);
    for (const auto* a : {&from, &to})
      if (const std::string problem = arrays_problem(*a); !problem.empty())
        return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, (a == &from ? "from: " : "to: ") + problem);
    if (from.bucket_capacity != to.bucket_capacity || from.row_width != to.row_width || to.buckets < from.buckets)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
                  "a rehash keeps the bucket capacity and row width and does not shrink the buckets");
    const auto s = static_cast<cudaStream_t>(stream);
    const unsigned lanes = lanes_for(from);
    const int grid = grid_for(from.buckets * lanes);
    if (lanes == 32) rehash_kernel<32><<<grid, kBlockThreads, 0, s>>>(from, to);
    else rehash_kernel<16><<<grid, kBlockThreads, 0, s>>>(from, to);
    if (const cudaError_t err = cudaGetLastError(); err != cudaSuccess) return cuda_fail("rehash_kernel", err);
    return EMBSCALE_CUDA_OK;
  });
}
