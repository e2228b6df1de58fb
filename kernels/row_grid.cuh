// The launch shape of work over rows of `width` values (gather, pool, unpool, permute, the
// optimizers' updates): blockDim.x threads over one row's values (consecutive threads, consecutive
// values, so a warp's loads are coalesced) and blockDim.y rows per block. A thread finds its row
// and value from its indices, without the 64-bit division e / width that a flat thread-per-value
// index needs (the H200 profile: that division, not memory, bounded the flat kernels).
//
// Threads over a row: the least power of two >= width, at most `max_x` (32 keeps a row inside one
// warp, which the optimizers' per-row state needs: their threads of a row meet at __syncwarp).
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace embscale::cuda {

struct RowGrid {
  dim3 grid, block;
};

inline constexpr unsigned kRowGridThreads = 256;
inline constexpr std::uint64_t kRowGridMaxBlocks = 1u << 20;

// A grid over `rows` rows of `width` values; rows beyond the grid are reached by a grid stride
// (EMBSCALE_FOR_ROWS).
inline RowGrid row_grid(std::uint64_t rows, std::uint64_t width, unsigned max_x = 128) {
  unsigned x = 1;
  while (x < width && x < max_x) x *= 2;
  const unsigned y = kRowGridThreads / x;
  std::uint64_t blocks = (rows + y - 1) / y;
  if (blocks == 0) blocks = 1;
  if (blocks > kRowGridMaxBlocks) blocks = kRowGridMaxBlocks;
  return {dim3(static_cast<unsigned>(blocks)), dim3(x, y)};
}

}  // namespace embscale::cuda

// Row i of `rows`, a grid stride over them (the loop is per row: its threads leave it together).
#define EMBSCALE_FOR_ROWS(i, rows)                                                                     \
  for (std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.y) + threadIdx.y; i < (rows); \
       i += static_cast<std::uint64_t>(gridDim.x) * blockDim.y)
// Value c of a row of `width` values, this thread's share.
#define EMBSCALE_FOR_VALUES(c, width) for (std::uint64_t c = threadIdx.x; c < (width); c += blockDim.x)
