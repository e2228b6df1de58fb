// The launch shape of work over rows of `width` values (embedding_rows.cu: the gather and the
// optimizers' updates): blockDim.x threads over one row's values (consecutive threads, consecutive
// values, so a warp's loads are coalesced) and blockDim.y rows per block; a thread finds its row and
// value from its indices. The updates need it: a row's threads share the row's per-row state
// (row-wise AdaGrad's accumulator, LazyGlobal Adam's last step) and, with at most 32 threads over a
// row, lie in one warp and meet at __syncwarp. (On the H200 the gather ran as fast in this shape as
// with a flat thread per value; the pool and unpool ran 15 % slower in it, so they stay flat:
// results/measurements/2026-11-28-gpu-step-h200.md.)
//
// Threads over a row: the least power of two >= width, at most `max_x`.
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
