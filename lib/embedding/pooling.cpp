#include "embedding/pooling.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/simd_level.hpp"

namespace embscale::embedding {

void pool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> rows,
               std::size_t dim, bool mean, std::span<float> pooled) {
  EMBSCALE_EXPECTS(pooled.size() == static_cast<std::size_t>(batch.num_bags()) * dim, "pooled has the wrong size");
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    float* out = pooled.data() + static_cast<std::size_t>(b) * dim;
    std::fill(out, out + dim, 0.0f);
    const auto first = batch.offsets[static_cast<std::size_t>(b)], last = batch.offsets[static_cast<std::size_t>(b) + 1];
    for (auto k = first; k < last; ++k) {
      const float* v = rows.data() + inverse[static_cast<std::size_t>(k)] * dim;
      for (std::size_t d = 0; d < dim; ++d) out[d] += v[d];
    }
    if (mean && last > first) {
      const float scale = 1.0f / static_cast<float>(last - first);
      for (std::size_t d = 0; d < dim; ++d) out[d] *= scale;
    }
  }
}

void unpool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> grad_pooled,
                 std::size_t dim, bool mean, std::span<float> grads) {
  EMBSCALE_EXPECTS(grad_pooled.size() == static_cast<std::size_t>(batch.num_bags()) * dim,
                   "the pooled gradient has the wrong size");
  std::fill(grads.begin(), grads.end(), 0.0f);
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const auto first = batch.offsets[static_cast<std::size_t>(b)], last = batch.offsets[static_cast<std::size_t>(b) + 1];
    if (last == first) continue;
    const float scale = mean ? 1.0f / static_cast<float>(last - first) : 1.0f;
    const float* g = grad_pooled.data() + static_cast<std::size_t>(b) * dim;
    for (auto k = first; k < last; ++k) {
      float* out = grads.data() + inverse[static_cast<std::size_t>(k)] * dim;
      for (std::size_t d = 0; d < dim; ++d) out[d] += scale * g[d];
    }
  }
}

namespace {

constexpr std::size_t kLineFloats = 64 / sizeof(float);  // one cache line
constexpr std::size_t kPairsAhead = 8;  // pairs visited between a row's prefetch and its use

// Runs body(first, last) on column ranges that split [0, width) among `threads` (whole cache
// lines; a thread with no columns gets none), on OpenMP threads when there are several.
template <class Body>
void over_column_ranges(std::size_t width, int threads, const Body& body) {
  const std::size_t lines = (width + kLineFloats - 1) / kLineFloats;
  const auto parts = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1, lines);
  if (parts == 1) return body(std::size_t{0}, width);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast<int>(parts))
  for (std::size_t p = 0; p < parts; ++p)
    body(std::min(width, p * lines / parts * kLineFloats), std::min(width, (p + 1) * lines / parts * kLineFloats));
}

// The runs of consecutive pairs of one position (on an owner: a bag's keys from one requester).
struct Runs {
  std::vector<std::size_t> start;    // run r is pairs [start[r], start[r + 1])
  bool one_run_per_position = true;  // then runs may be pooled on any thread: no output value is shared
};

Runs runs_of(std::span<const std::int64_t> positions, std::size_t out_rows) {
  Runs runs;
  std::vector<std::uint8_t> seen(out_rows, 0);
  for (std::size_t j = 0; j < positions.size(); ++j) {
    if (j > 0 && positions[j] == positions[j - 1]) continue;
    const auto p = static_cast<std::size_t>(positions[j]);
    EMBSCALE_EXPECTS(p < out_rows, "a pair's position lies outside the output");
    runs.one_run_per_position = runs.one_run_per_position && !seen[p];
    seen[p] = 1;
    runs.start.push_back(j);
  }
  runs.start.push_back(positions.size());
  return runs;
}

// Eight floats as one value (GCC's vector extension): what keeps a block's accumulators in
// registers whatever the compiler proves about aliasing (one ymm at AVX2, two xmm at baseline).
// Loaded and stored with memcpy: rows need no alignment.
using Float8 = float __attribute__((vector_size(32)));
constexpr std::size_t kBlock = 4;  // Float8 accumulators: 32 columns

// Pools runs [first_run, last_run), columns [first, last), rows found by row(i) (a pointer to
// distinct key i's values). A run is summed kBlock x 8 columns at a time in registers, out's
// values loaded and stored once per run instead of once per pair, each value taking its additions
// in pair order. Rows are random accesses into a table far larger than the caches: the row
// kPairsAhead pairs ahead is prefetched, one row per row used, so that several misses are in
// flight (as FBGEMM's CPU kernel does). Compiled for the CPU's SIMD level (core/simd_level.hpp):
// additions only, the same bits on every path.
template <class RowOf>
void pool_runs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse, const RowOf& row,
               std::size_t width, float* out, const Runs& runs, std::size_t first_run, std::size_t last_run,
               std::size_t first, std::size_t last) {
  const std::size_t blocked = first + (last - first) / (8 * kBlock) * (8 * kBlock);
  const std::size_t stop = runs.start[last_run];  // prefetches stay within this thread's pairs
  run_at(simd_level(), [&]() EMBSCALE_ALWAYS_INLINE {
    const auto prefetch = [&](std::size_t m) EMBSCALE_ALWAYS_INLINE {
      if (m >= stop) return;
      const float* r = row(inverse[m]);
      for (std::size_t d = first; d < last; d += kLineFloats) __builtin_prefetch(r + d);
    };
    for (std::size_t m = runs.start[first_run]; m < std::min(runs.start[first_run] + kPairsAhead, stop); ++m) prefetch(m);
    for (std::size_t k = first_run; k < last_run; ++k) {
      const std::size_t j = runs.start[k], end = runs.start[k + 1];
      float* o = out + static_cast<std::size_t>(positions[j]) * width;
      for (std::size_t c = first; c < blocked; c += 8 * kBlock) {
        Float8 acc[kBlock], v;
        std::memcpy(acc, o + c, sizeof acc);
        for (std::size_t m = j; m < end; ++m) {
          if (c == first) prefetch(m + kPairsAhead);
          const float* r = row(inverse[m]) + c;
          for (std::size_t b = 0; b < kBlock; ++b) {
            std::memcpy(&v, r + 8 * b, sizeof v);
            acc[b] += v;
          }
        }
        std::memcpy(o + c, acc, sizeof acc);
      }
      for (std::size_t m = j; m < end; ++m) {
        if (blocked == first) prefetch(m + kPairsAhead);
        const float* r = row(inverse[m]);
        for (std::size_t d = blocked; d < last; ++d) o[d] += r[d];
      }
    }
  });
}

// Threads: whole runs each when no position has two runs (each output row then belongs to one
// thread); else a share of the columns of every run (over_column_ranges).
template <class RowOf>
void pool_pairs_from(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse, const RowOf& row,
                     std::size_t width, std::span<float> out, int threads) {
  EMBSCALE_EXPECTS(inverse.size() == positions.size(), "one distinct id per pair");
  EMBSCALE_EXPECTS(width >= 1, "pooling needs width >= 1");
  const Runs runs = runs_of(positions, out.size() / width);
  const std::size_t count = runs.start.size() - 1;
  if (threads > 1 && runs.one_run_per_position) {
#pragma omp parallel num_threads(threads)
    {
      const auto t = static_cast<std::size_t>(omp_get_thread_num()), n = static_cast<std::size_t>(omp_get_num_threads());
      pool_runs(positions, inverse, row, width, out.data(), runs, count * t / n, count * (t + 1) / n, 0, width);
    }
    return;
  }
  over_column_ranges(width, threads, [&](std::size_t first, std::size_t last) {
    pool_runs(positions, inverse, row, width, out.data(), runs, 0, count, first, last);
  });
}

}  // namespace

void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float> rows, std::size_t width, std::span<float> out, int threads) {
  pool_pairs_from(positions, inverse, [&](std::uint32_t i) EMBSCALE_ALWAYS_INLINE { return rows.data() + i * width; },
                  width, out, threads);
}

void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float* const> rows, std::size_t width, std::span<float> out, int threads) {
  pool_pairs_from(positions, inverse, [&](std::uint32_t i) EMBSCALE_ALWAYS_INLINE { return rows[i]; }, width, out,
                  threads);
}

void unpool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                  std::span<const float> grad_out, std::size_t width, std::span<float> grads, int threads) {
  EMBSCALE_EXPECTS(inverse.size() == positions.size(), "one distinct id per pair");
  const std::size_t ids = width ? grads.size() / width : 0;
  std::atomic<bool> in_order{true};  // false: some thread saw the ids out of order
  over_column_ranges(width, threads, [&](std::size_t first, std::size_t last) {
    std::size_t fresh = 0;  // the next id to appear for the first time
    for (std::size_t j = 0; j < positions.size(); ++j) {
      const float* g = grad_out.data() + static_cast<std::size_t>(positions[j]) * width;
      float* o = grads.data() + std::size_t{inverse[j]} * width;
      if (inverse[j] == fresh) {
        ++fresh;
        for (std::size_t d = first; d < last; ++d) o[d] = g[d];
      } else if (inverse[j] < fresh) {
        for (std::size_t d = first; d < last; ++d) o[d] += g[d];
      } else {
        in_order.store(false, std::memory_order_relaxed);
        return;
      }
    }
    if (fresh != ids) in_order.store(false, std::memory_order_relaxed);
  });
  if (!in_order)
    throw Error("unpool_pairs: the distinct ids must first appear in increasing order, each at least once (" +
                std::to_string(ids) + " ids)");
}

void divide_by_bag_size(const Batch& batch, std::size_t dim, std::span<float> values) {
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const auto n = batch.offsets[static_cast<std::size_t>(b) + 1] - batch.offsets[static_cast<std::size_t>(b)];
    if (n <= 1) continue;
    const float scale = 1.0f / static_cast<float>(n);
    float* v = values.data() + static_cast<std::size_t>(b) * dim;
    for (std::size_t d = 0; d < dim; ++d) v[d] *= scale;
  }
}

}  // namespace embscale::embedding
