// libembscale_cuda.so: the batch operations of a pooled embedding step, the embedding_step family
// (device/families/embedding_step.h). The rules are lib/embedding/portable/step_ref.hpp's (owner,
// placement, the mean's scale, the regression), the orders the host's (embedding/pooling.hpp):
//   route    owner and position per key occurrence (a thread per bag), then a stable radix sort
//            of the occurrences by owner (CUB), so each owner's group keeps occurrence order;
//   unique   a stable radix sort of the pairs by key: runs of equal keys are the distinct keys
//            (ascending), each run lists its pairs in pair order (the unpool's grouping);
//   pool     a stable radix sort of the pairs by position, then a thread per (position, column)
//            sums its run in pair order from +0 (pool_pairs' order: the host's bits);
//   unpool   a thread per (distinct key, column) sums its run from its first pair (or from +0);
//   regression  a warp per sample (its loss summed in value order through shuffles);
//   group    a key list stably sorted by owner (the requester-pooled schemes' routing);
//   permute  rows gathered or scattered by an index.
// Sums use __fadd_rn, products __fmul_rn (step_ref.hpp), never a fused multiply-add. Every
// kernel is a grid-stride loop, so no size meets a grid limit; CUB's counts are int, so a call
// takes at most 2^31 - 1 pairs.
#include <cuda_runtime.h>
#include <cub/cub.cuh>

#include <cstdint>
#include <limits>
#include <string>

#include "abi_boundary.hpp"
#include "device/families/embedding_step.h"
#include "embedding/portable/step_ref.hpp"

namespace {

namespace portable = embscale::embedding::portable;
using embscale::cuda::cuda_fail;
using embscale::cuda::fail;
using embscale::cuda::guarded;

constexpr int kBlock = 256;
constexpr std::uint64_t kMaxGrid = 1u << 20;
constexpr std::uint64_t kAlign = 256;

unsigned grid_for(std::uint64_t threads) {
  const std::uint64_t blocks = (threads + kBlock - 1) / kBlock;
  return static_cast<unsigned>(blocks == 0 ? 1 : (blocks < kMaxGrid ? blocks : kMaxGrid));
}

#define EMBSCALE_GRID_STRIDE(i, total)                                                                   \
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x; i < (total); \
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.x)

// Bits a radix sort needs for values below `bound` (at least 1).
int bits_below(std::uint64_t bound) {
  int bits = 1;
  while (bits < 64 && (std::uint64_t{1} << bits) < bound) ++bits;
  return bits;
}

// Aligned pieces of the caller's scratch, in a fixed order; with a null base it only adds sizes.
class Carver {
 public:
  explicit Carver(void* base) : base_(static_cast<char*>(base)) {}
  template <class T> T* take(std::uint64_t count) {
    T* p = base_ ? reinterpret_cast<T*>(base_ + used_) : nullptr;
    used_ += (count * sizeof(T) + kAlign - 1) / kAlign * kAlign;
    return p;
  }
  std::uint64_t used() const noexcept { return used_; }

 private:
  char* base_;
  std::uint64_t used_ = 0;
};

// CUB's temporary bytes for a stable pair sort of n items and for an inclusive sum of n. A failed
// query (a sticky error of an earlier kernel, no device) is kept in `error`, which the entry
// points report instead of sizing scratch with 0 bytes.
template <class K> std::size_t sort_bytes(int n, cudaError_t& error) {
  std::size_t bytes = 0;
  const cudaError_t err = cub::DeviceRadixSort::SortPairs(
      nullptr, bytes, static_cast<const K*>(nullptr), static_cast<K*>(nullptr),
      static_cast<const std::uint32_t*>(nullptr), static_cast<std::uint32_t*>(nullptr), n);
  if (err != cudaSuccess) error = err;
  return bytes;
}
std::size_t scan_bytes(int n, cudaError_t& error) {
  std::size_t bytes = 0;
  const cudaError_t err = cub::DeviceScan::InclusiveSum(nullptr, bytes, static_cast<const std::uint32_t*>(nullptr),
                                                        static_cast<std::uint32_t*>(nullptr), n);
  if (err != cudaSuccess) error = err;
  return bytes;
}

// The scratch layouts of the three sorting calls (route, unique, pool), each from the start.
struct RouteScratch {
  std::uint32_t *dest = nullptr, *dest_sorted = nullptr, *index = nullptr, *index_sorted = nullptr;
  std::int64_t* position = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  cudaError_t error = cudaSuccess;
  RouteScratch(void* base, int n) : temp_bytes(sort_bytes<std::uint32_t>(n, error)) {
    Carver c(base);
    dest = c.take<std::uint32_t>(n);
    dest_sorted = c.take<std::uint32_t>(n);
    index = c.take<std::uint32_t>(n);
    index_sorted = c.take<std::uint32_t>(n);
    position = c.take<std::int64_t>(n);
    temp = c.take<char>(temp_bytes);
    used = c.used();
  }
  std::uint64_t used = 0;
};
struct UniqueScratch {
  std::int64_t *keys = nullptr, *keys_sorted = nullptr;
  std::uint32_t *index = nullptr, *ids = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  cudaError_t error = cudaSuccess;
  UniqueScratch(void* base, int n) {
    temp_bytes = sort_bytes<std::int64_t>(n, error);
    const std::size_t scan = scan_bytes(n, error);
    if (scan > temp_bytes) temp_bytes = scan;
    Carver c(base);
    keys = c.take<std::int64_t>(n);
    keys_sorted = c.take<std::int64_t>(n);
    index = c.take<std::uint32_t>(n);
    ids = c.take<std::uint32_t>(n);
    temp = c.take<char>(temp_bytes);
    used = c.used();
  }
  std::uint64_t used = 0;
};
struct PoolScratch {
  std::uint64_t *positions = nullptr, *positions_sorted = nullptr;
  std::uint32_t *index = nullptr, *index_sorted = nullptr, *begin = nullptr, *end = nullptr;
  void* temp = nullptr;
  std::size_t temp_bytes = 0;
  cudaError_t error = cudaSuccess;
  PoolScratch(void* base, int n, std::uint64_t rows) : temp_bytes(sort_bytes<std::uint64_t>(n, error)) {
    Carver c(base);
    positions = c.take<std::uint64_t>(n);
    positions_sorted = c.take<std::uint64_t>(n);
    index = c.take<std::uint32_t>(n);
    index_sorted = c.take<std::uint32_t>(n);
    begin = c.take<std::uint32_t>(rows);
    end = c.take<std::uint32_t>(rows);
    temp = c.take<char>(temp_bytes);
    used = c.used();
  }
  std::uint64_t used = 0;
};

int too_many(std::uint64_t n) {
  return fail(EMBSCALE_CUDA_INVALID_ARGUMENT,
              std::to_string(n) + " pairs in one call: the embedding_step kernels take at most 2^31 - 1");
}

// ---- route ----

__global__ void route_owners(portable::OwnerRef rule, int rule_ranks, portable::PlacementRef place,
                             const std::int64_t* keys, const std::int64_t* offsets, std::uint64_t bags,
                             std::int32_t slots, std::uint32_t* dest, std::uint32_t* index, std::int64_t* position,
                             unsigned long long* counts) {
  EMBSCALE_GRID_STRIDE(b, bags) {
    const auto sample = static_cast<std::int64_t>(b / static_cast<std::uint64_t>(slots));
    const auto slot = static_cast<std::int32_t>(b % static_cast<std::uint64_t>(slots));
    int last_dest = -1;
    std::int64_t last_position = 0;
    for (std::int64_t k = offsets[b]; k < offsets[b + 1]; ++k) {
      const int d = portable::owner_of(rule, keys[k], slot);
      index[k] = static_cast<std::uint32_t>(k);
      if (d < 0 || d >= rule_ranks) {  // a key outside the rule: sorted last, counted nowhere
        dest[k] = static_cast<std::uint32_t>(rule_ranks);
        position[k] = -1;
        continue;
      }
      if (d != last_dest) last_position = portable::position_of(place, last_dest = d, sample, slot);
      dest[k] = static_cast<std::uint32_t>(d);
      position[k] = last_position;
      atomicAdd(counts + d, 1ull);
    }
  }
}

__global__ void gather_pairs(const std::int64_t* keys, const std::int64_t* position, const std::uint32_t* order,
                             std::uint64_t n, portable::KeyPosition* pairs) {
  EMBSCALE_GRID_STRIDE(i, n) {
    const std::uint32_t k = order[i];
    pairs[i] = {keys[k], position[k]};
  }
}

// every_rank: group d is the whole batch, at d x n, each bag at its place on d.
__global__ void route_to_every_rank(portable::PlacementRef place, std::int32_t ranks, const std::int64_t* keys,
                                    std::uint64_t n, const std::int64_t* offsets, std::uint64_t bags,
                                    std::int32_t slots, portable::KeyPosition* pairs, std::uint64_t* counts) {
  EMBSCALE_GRID_STRIDE(t, bags * static_cast<std::uint64_t>(ranks)) {
    const auto d = static_cast<int>(t / bags);
    const std::uint64_t b = t % bags;
    const auto sample = static_cast<std::int64_t>(b / static_cast<std::uint64_t>(slots));
    const auto slot = static_cast<std::int32_t>(b % static_cast<std::uint64_t>(slots));
    const std::int64_t at = portable::position_of(place, d, sample, slot);
    for (std::int64_t k = offsets[b]; k < offsets[b + 1]; ++k)
      pairs[static_cast<std::uint64_t>(d) * n + static_cast<std::uint64_t>(k)] = {keys[k], at};
    if (b == 0) counts[d] = n;
  }
}

// ---- unique ----

__global__ void split_keys(const std::int64_t* from, std::uint64_t stride, std::uint64_t n, std::int64_t* keys,
                           std::uint32_t* index) {
  EMBSCALE_GRID_STRIDE(j, n) {
    keys[j] = from[j * stride];
    index[j] = static_cast<std::uint32_t>(j);
  }
}

// ---- group and permute ----

__global__ void group_owners(portable::OwnerRef rule, int ranks, const std::int64_t* keys, std::uint64_t n,
                             std::uint32_t* dest, std::uint32_t* index, unsigned long long* counts) {
  EMBSCALE_GRID_STRIDE(i, n) {
    const int d = portable::owner_of(rule, keys[i], 0);
    index[i] = static_cast<std::uint32_t>(i);
    const bool valid = d >= 0 && d < ranks;  // else sorted last, counted nowhere
    dest[i] = static_cast<std::uint32_t>(valid ? d : ranks);
    if (valid) atomicAdd(counts + d, 1ull);
  }
}

__global__ void gather_keys(const std::int64_t* keys, const std::uint32_t* order, std::uint64_t n,
                            std::int64_t* grouped) {
  EMBSCALE_GRID_STRIDE(p, n) grouped[p] = keys[order[p]];
}

__global__ void permute_rows(const float* in, const std::uint32_t* index, std::uint64_t n, std::uint64_t width,
                             int scatter, float* out) {
  EMBSCALE_GRID_STRIDE(e, n * width) {
    const std::uint64_t p = e / width, c = e % width;
    if (scatter) out[static_cast<std::uint64_t>(index[p]) * width + c] = in[e];
    else out[e] = in[static_cast<std::uint64_t>(index[p]) * width + c];
  }
}

__global__ void mark_heads(const std::int64_t* sorted, std::uint64_t n, std::uint32_t* head) {
  EMBSCALE_GRID_STRIDE(i, n) head[i] = (i == 0 || sorted[i] != sorted[i - 1]) ? 1u : 0u;
}

// ids: the inclusive sum of the heads (the distinct index of sorted position i is ids[i] - 1).
__global__ void write_distinct(const std::int64_t* sorted, const std::uint32_t* ids, const std::uint32_t* by_key,
                               std::uint64_t n, std::int64_t* distinct, std::uint32_t* inverse,
                               std::uint32_t* key_begin, unsigned long long* count) {
  EMBSCALE_GRID_STRIDE(i, n) {
    const std::uint32_t id = ids[i] - 1;
    inverse[by_key[i]] = id;
    if (i == 0 || sorted[i] != sorted[i - 1]) {
      distinct[id] = sorted[i];
      key_begin[id] = static_cast<std::uint32_t>(i);
    }
    if (i == n - 1) {
      *count = ids[i];
      key_begin[ids[i]] = static_cast<std::uint32_t>(n);
    }
  }
}

// ---- pool and unpool ----

// Positions outside [0, rows) (the header's contract excludes them) become `rows`: sorted last,
// never pooled.
__global__ void split_positions(const portable::KeyPosition* pairs, std::uint64_t n, std::uint64_t rows,
                                std::uint64_t* positions, std::uint32_t* index) {
  EMBSCALE_GRID_STRIDE(j, n) {
    const std::int64_t p = pairs[j].position;
    positions[j] = p < 0 || static_cast<std::uint64_t>(p) >= rows ? rows : static_cast<std::uint64_t>(p);
    index[j] = static_cast<std::uint32_t>(j);
  }
}

__global__ void mark_runs(const std::uint64_t* sorted, std::uint64_t n, std::uint64_t positions, std::uint32_t* begin,
                          std::uint32_t* end) {
  EMBSCALE_GRID_STRIDE(i, n) {
    const std::uint64_t p = sorted[i];
    if (p >= positions) continue;  // outside the output (the header's contract excludes it): not pooled
    if (i == 0 || sorted[i - 1] != p) begin[p] = static_cast<std::uint32_t>(i);
    if (i == n - 1 || sorted[i + 1] != p) end[p] = static_cast<std::uint32_t>(i + 1);
  }
}

__global__ void pool_runs(const std::uint32_t* begin, const std::uint32_t* end, const std::uint32_t* order,
                          const std::uint32_t* inverse, const float* rows, std::uint64_t width, std::uint64_t positions,
                          float* out) {
  EMBSCALE_GRID_STRIDE(e, positions * width) {
    const std::uint64_t p = e / width, c = e % width;
    float sum = 0.0f;
    for (std::uint32_t i = begin[p]; i < end[p]; ++i)
      sum = __fadd_rn(sum, rows[static_cast<std::uint64_t>(inverse[order[i]]) * width + c]);
    out[e] = sum;
  }
}

// The row of grad_out that key j's gradient is: its position, or j itself without positions.
__device__ std::uint64_t row_of_key(const std::int64_t* positions, std::uint64_t stride, std::uint32_t j) {
  return positions ? static_cast<std::uint64_t>(positions[static_cast<std::uint64_t>(j) * stride]) : j;
}

__global__ void unpool_runs(const std::int64_t* positions, std::uint64_t stride, const std::uint32_t* by_key,
                            const std::uint32_t* key_begin, std::uint64_t count, const float* grad_out,
                            std::uint64_t width, int from_zero, float* grads) {
  EMBSCALE_GRID_STRIDE(e, count * width) {
    const std::uint64_t i = e / width, c = e % width;
    const std::uint32_t first = key_begin[i], last = key_begin[i + 1];
    float g = grad_out[row_of_key(positions, stride, by_key[first]) * width + c];
    if (from_zero) g = __fadd_rn(0.0f, g);
    for (std::uint32_t at = first + 1; at < last; ++at)
      g = __fadd_rn(g, grad_out[row_of_key(positions, stride, by_key[at]) * width + c]);
    grads[e] = g;
  }
}

// ---- the mean and the loss ----

__global__ void scale_bags(const std::int64_t* offsets, std::uint64_t bags, std::uint64_t dim, float* values) {
  EMBSCALE_GRID_STRIDE(e, bags * dim) {
    const std::uint64_t b = e / dim;
    values[e] = __fmul_rn(values[e], portable::bag_scale(offsets[b + 1] - offsets[b]));
  }
}

// A block per segment (grid-stride over segments), its threads over the segment's floats.
__global__ void copy_segments(const std::uint64_t* segments, std::uint64_t count, int to_blocks, const float* from,
                              float* to) {
  for (std::uint64_t i = blockIdx.x; i < count; i += gridDim.x) {
    const std::uint64_t* s = segments + 3 * i;
    const float* src = from + (to_blocks ? s[1] : s[0]);
    float* dst = to + (to_blocks ? s[0] : s[1]);
    for (std::uint64_t e = threadIdx.x; e < s[2]; e += blockDim.x) dst[e] = src[e];
  }
}

// A warp per sample: each lane the terms of its values (regression_term), lane 0's running sum
// taking them in value order through shuffles, so the loss is regression_sample's, bit for bit,
// while the loads and the gradient's stores are coalesced.
__global__ void regression(const float* values, const float* labels, std::uint64_t label_dim, std::uint64_t samples,
                           std::uint64_t width, double inv_batch, double* sample_loss, float* grad) {
  constexpr unsigned kLanes = 32;
  const unsigned lane = threadIdx.x % kLanes;
  const std::uint64_t warps = static_cast<std::uint64_t>(gridDim.x) * blockDim.x / kLanes;
  for (std::uint64_t s = (blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x) / kLanes; s < samples;
       s += warps) {  // the same s for every lane of a warp: it leaves the loop whole
    const float target = portable::regression_target_of(labels[s * label_dim]);
    const float* row = values + s * width;
    float* row_grad = grad + s * width;
    double loss = 0.0;
    for (std::uint64_t first = 0; first < width; first += kLanes) {
      const std::uint64_t v = first + lane;
      double term = 0.0;
      if (v < width) term = portable::regression_term(row[v], target, inv_batch, row_grad[v]);
      const std::uint64_t count = width - first < kLanes ? width - first : kLanes;
      for (unsigned k = 0; k < count; ++k)
        loss = embscale::kv::portable::add_rn(loss, __shfl_sync(0xffffffffu, term, k));
    }
    if (lane == 0) sample_loss[s] = loss;
  }
}

int launched(const char* what) {
  const cudaError_t err = cudaGetLastError();
  return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail(what, err);
}

}  // namespace

extern "C" {

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_layout(uint64_t* owner_bytes, uint64_t* placement_bytes,
                                                             uint64_t* pair_bytes) {
  return guarded([&] {
    if (!owner_bytes || !placement_bytes || !pair_bytes)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "an output of the layout is NULL");
    *owner_bytes = sizeof(portable::OwnerRef);
    *placement_bytes = sizeof(portable::PlacementRef);
    *pair_bytes = sizeof(portable::KeyPosition);
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_scratch(uint64_t n, uint64_t positions, uint64_t* bytes) {
  return guarded([&] {
    if (!bytes) return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "bytes is NULL");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return too_many(n);
    const int items = static_cast<int>(n);
    const RouteScratch route(nullptr, items);
    const UniqueScratch unique(nullptr, items);
    const PoolScratch pool(nullptr, items, positions);
    for (const cudaError_t err : {route.error, unique.error, pool.error})
      if (err != cudaSuccess) return cuda_fail("sizing CUB's temporary storage", err);
    std::uint64_t most = route.used;
    if (unique.used > most) most = unique.used;
    if (pool.used > most) most = pool.used;
    *bytes = most;
    return static_cast<int>(EMBSCALE_CUDA_OK);
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_route(const void* owner, const void* placement, int every_rank,
                                                            int32_t ranks, const int64_t* keys, uint64_t n,
                                                            const int64_t* offsets, uint64_t bags, int32_t slots,
                                                            void* pairs, uint64_t* counts, void* scratch,
                                                            void* stream) {
  return guarded([&] {
    if (!owner || !placement || ranks < 1 || slots < 1 || !offsets || !counts ||
        (n > 0 && (!keys || !pairs || (!every_rank && !scratch))))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_route: a required argument is missing");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return too_many(n);
    const auto s = static_cast<cudaStream_t>(stream);
    const auto rule = *static_cast<const portable::OwnerRef*>(owner);
    const auto place = *static_cast<const portable::PlacementRef*>(placement);
    auto* out = static_cast<portable::KeyPosition*>(pairs);
    if (every_rank) {
      if (n == 0) {
        const cudaError_t err = cudaMemsetAsync(counts, 0, static_cast<std::size_t>(ranks) * sizeof(std::uint64_t), s);
        return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail("clearing the counts", err);
      }
      route_to_every_rank<<<grid_for(bags * static_cast<std::uint64_t>(ranks)), kBlock, 0, s>>>(
          place, ranks, keys, n, offsets, bags, slots, out, counts);
      return launched("embedding_step_route");
    }
    cudaError_t err = cudaMemsetAsync(counts, 0, static_cast<std::size_t>(ranks) * sizeof(std::uint64_t), s);
    if (err != cudaSuccess) return cuda_fail("clearing the counts", err);
    if (n == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    RouteScratch r(scratch, static_cast<int>(n));
    route_owners<<<grid_for(bags), kBlock, 0, s>>>(rule, ranks, place, keys, offsets, bags, slots, r.dest, r.index,
                                                   r.position, reinterpret_cast<unsigned long long*>(counts));
    if (const int code = launched("embedding_step_route"); code != EMBSCALE_CUDA_OK) return code;
    err = cub::DeviceRadixSort::SortPairs(r.temp, r.temp_bytes, r.dest, r.dest_sorted, r.index, r.index_sorted,
                                          static_cast<int>(n), 0, bits_below(static_cast<std::uint64_t>(ranks) + 1), s);
    if (err != cudaSuccess) return cuda_fail("sorting the pairs by owner", err);
    gather_pairs<<<grid_for(n), kBlock, 0, s>>>(keys, r.position, r.index_sorted, n, out);
    return launched("embedding_step_route");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_unique(const int64_t* keys, uint64_t stride, uint64_t n,
                                                             int64_t* distinct, uint64_t* count, uint32_t* inverse,
                                                             uint32_t* by_key, uint32_t* key_begin, void* scratch,
                                                             void* stream) {
  return guarded([&] {
    if (!count || !key_begin || stride < 1 || (n > 0 && (!keys || !distinct || !inverse || !by_key || !scratch)))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_unique: a required argument is missing");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return too_many(n);
    const auto s = static_cast<cudaStream_t>(stream);
    if (n == 0) {
      cudaError_t err = cudaMemsetAsync(count, 0, sizeof(std::uint64_t), s);
      if (err == cudaSuccess) err = cudaMemsetAsync(key_begin, 0, sizeof(std::uint32_t), s);
      return err == cudaSuccess ? static_cast<int>(EMBSCALE_CUDA_OK) : cuda_fail("an empty de-duplication", err);
    }
    UniqueScratch u(scratch, static_cast<int>(n));
    split_keys<<<grid_for(n), kBlock, 0, s>>>(keys, stride, n, u.keys, u.index);
    if (const int code = launched("embedding_step_unique"); code != EMBSCALE_CUDA_OK) return code;
    std::size_t bytes = u.temp_bytes;
    cudaError_t err = cub::DeviceRadixSort::SortPairs(u.temp, bytes, u.keys, u.keys_sorted, u.index, by_key,
                                                      static_cast<int>(n), 0, 64, s);
    if (err != cudaSuccess) return cuda_fail("sorting the keys", err);
    mark_heads<<<grid_for(n), kBlock, 0, s>>>(u.keys_sorted, n, u.index);  // index is free again: the heads
    if (const int code = launched("embedding_step_unique"); code != EMBSCALE_CUDA_OK) return code;
    bytes = u.temp_bytes;
    err = cub::DeviceScan::InclusiveSum(u.temp, bytes, u.index, u.ids, static_cast<int>(n), s);
    if (err != cudaSuccess) return cuda_fail("numbering the distinct keys", err);
    write_distinct<<<grid_for(n), kBlock, 0, s>>>(u.keys_sorted, u.ids, by_key, n, distinct, inverse, key_begin,
                                                  reinterpret_cast<unsigned long long*>(count));
    return launched("embedding_step_unique");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_group(const void* owner, int32_t ranks, const int64_t* keys,
                                                            uint64_t n, int64_t* grouped, uint32_t* order,
                                                            uint64_t* counts, void* scratch, void* stream) {
  return guarded([&] {
    if (!owner || ranks < 1 || !counts || (n > 0 && (!keys || !grouped || !order || !scratch)))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_group: a required argument is missing");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return too_many(n);
    const auto s = static_cast<cudaStream_t>(stream);
    cudaError_t err = cudaMemsetAsync(counts, 0, static_cast<std::size_t>(ranks) * sizeof(std::uint64_t), s);
    if (err != cudaSuccess) return cuda_fail("clearing the counts", err);
    if (n == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    RouteScratch r(scratch, static_cast<int>(n));
    group_owners<<<grid_for(n), kBlock, 0, s>>>(*static_cast<const portable::OwnerRef*>(owner), ranks, keys, n, r.dest,
                                                r.index, reinterpret_cast<unsigned long long*>(counts));
    if (const int code = launched("embedding_step_group"); code != EMBSCALE_CUDA_OK) return code;
    err = cub::DeviceRadixSort::SortPairs(r.temp, r.temp_bytes, r.dest, r.dest_sorted, r.index, order,
                                          static_cast<int>(n), 0, bits_below(static_cast<std::uint64_t>(ranks) + 1), s);
    if (err != cudaSuccess) return cuda_fail("sorting the keys by owner", err);
    gather_keys<<<grid_for(n), kBlock, 0, s>>>(keys, order, n, grouped);
    return launched("embedding_step_group");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_permute(const float* in, const uint32_t* index, uint64_t n,
                                                              uint64_t width, int scatter, float* out, void* stream) {
  return guarded([&] {
    if (n == 0 || width == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (!in || !index || !out)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_permute: a required argument is missing");
    permute_rows<<<grid_for(n * width), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(in, index, n, width, scatter,
                                                                                        out);
    return launched("embedding_step_permute");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_pool(const void* pairs, const uint32_t* inverse, uint64_t n,
                                                           const float* rows, uint64_t width, float* out,
                                                           uint64_t positions, void* scratch, void* stream) {
  return guarded([&] {
    if ((positions > 0 && (!out || !scratch)) || (n > 0 && (!pairs || !inverse || !rows)))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_pool: a required argument is missing");
    if (n > static_cast<std::uint64_t>(std::numeric_limits<int>::max())) return too_many(n);
    if (positions == 0 || width == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    const auto s = static_cast<cudaStream_t>(stream);
    PoolScratch q(scratch, static_cast<int>(n), positions);
    cudaError_t err = cudaMemsetAsync(q.begin, 0, positions * sizeof(std::uint32_t), s);
    if (err == cudaSuccess) err = cudaMemsetAsync(q.end, 0, positions * sizeof(std::uint32_t), s);
    if (err != cudaSuccess) return cuda_fail("clearing the runs", err);
    if (n > 0) {
      split_positions<<<grid_for(n), kBlock, 0, s>>>(static_cast<const portable::KeyPosition*>(pairs), n, positions,
                                                     q.positions, q.index);
      if (const int code = launched("embedding_step_pool"); code != EMBSCALE_CUDA_OK) return code;
      err = cub::DeviceRadixSort::SortPairs(q.temp, q.temp_bytes, q.positions, q.positions_sorted, q.index,
                                            q.index_sorted, static_cast<int>(n), 0, bits_below(positions + 1), s);
      if (err != cudaSuccess) return cuda_fail("sorting the pairs by position", err);
      mark_runs<<<grid_for(n), kBlock, 0, s>>>(q.positions_sorted, n, positions, q.begin, q.end);
      if (const int code = launched("embedding_step_pool"); code != EMBSCALE_CUDA_OK) return code;
    }
    pool_runs<<<grid_for(positions * width), kBlock, 0, s>>>(q.begin, q.end, q.index_sorted, inverse, rows, width,
                                                             positions, out);
    return launched("embedding_step_pool");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_unpool(const int64_t* positions, uint64_t stride,
                                                             const uint32_t* by_key, const uint32_t* key_begin,
                                                             uint64_t count, const float* grad_out, uint64_t width,
                                                             int from_zero, float* grads, void* stream) {
  return guarded([&] {
    if (count == 0 || width == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (!by_key || !key_begin || !grad_out || !grads || (positions && stride < 1))
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_unpool: a required argument is missing");
    unpool_runs<<<grid_for(count * width), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(
        positions, stride, by_key, key_begin, count, grad_out, width, from_zero, grads);
    return launched("embedding_step_unpool");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_scale_bags(const int64_t* offsets, uint64_t bags, uint64_t dim,
                                                                 float* values, void* stream) {
  return guarded([&] {
    if (bags == 0 || dim == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (!offsets || !values)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_scale_bags: a required argument is missing");
    scale_bags<<<grid_for(bags * dim), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(offsets, bags, dim, values);
    return launched("embedding_step_scale_bags");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_copy_segments(const uint64_t* segments, uint64_t count,
                                                                    int to_blocks, const float* from, float* to,
                                                                    void* stream) {
  return guarded([&] {
    if (count == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (!segments || !from || !to)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_copy_segments: a required argument is missing");
    const auto grid = static_cast<unsigned>(count < kMaxGrid ? count : kMaxGrid);
    copy_segments<<<grid, 128, 0, static_cast<cudaStream_t>(stream)>>>(segments, count, to_blocks, from, to);
    return launched("embedding_step_copy_segments");
  });
}

EMBSCALE_CUDA_EXPORT int embscale_cuda_embedding_step_regression(const float* values, const float* labels,
                                                                 uint64_t label_dim, uint64_t samples, uint64_t width,
                                                                 double inv_batch, double* sample_loss, float* grad,
                                                                 void* stream) {
  return guarded([&] {
    if (samples == 0) return static_cast<int>(EMBSCALE_CUDA_OK);
    if (!values || !labels || !sample_loss || !grad || label_dim < 1)
      return fail(EMBSCALE_CUDA_INVALID_ARGUMENT, "embedding_step_regression: a required argument is missing");
    regression<<<grid_for(samples * 32), kBlock, 0, static_cast<cudaStream_t>(stream)>>>(
        values, labels, label_dim, samples, width, inv_batch, sample_loss, grad);
    return launched("embedding_step_regression");
  });
}

}  // extern "C"
