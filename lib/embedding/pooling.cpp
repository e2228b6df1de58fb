#include "embedding/pooling.hpp"

#include <omp.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/simd_level.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {

void pool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> rows, std::size_t dim,
               bool mean, std::span<float> pooled) {
  EMBSCALE_EXPECTS(pooled.size() == static_cast<std::size_t>(batch.num_bags()) * dim, "pooled has the wrong size");
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    float* out = pooled.data() + static_cast<std::size_t>(b) * dim;
    std::fill(out, out + dim, 0.0f);
    const auto first = batch.offsets[static_cast<std::size_t>(b)],
               last = batch.offsets[static_cast<std::size_t>(b) + 1];
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
    const auto first = batch.offsets[static_cast<std::size_t>(b)],
               last = batch.offsets[static_cast<std::size_t>(b) + 1];
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

// Runs body(first, last) on column ranges that split [0, width) among `threads` (whole cache
// lines; a thread with no columns gets none), on OpenMP threads when there are several.
template <class Body> void over_column_ranges(std::size_t width, int threads, const Body& body) {
  const std::size_t lines = (width + kLineFloats - 1) / kLineFloats;
  const auto parts = std::clamp<std::size_t>(static_cast<std::size_t>(std::max(threads, 1)), 1, lines);
  if (parts == 1) return body(std::size_t{0}, width);
#pragma omp parallel for schedule(static, 1) num_threads(static_cast <int>(parts))
  for (std::size_t p = 0; p < parts; ++p)
    body(std::min(width, p * lines / parts * kLineFloats), std::min(width, (p + 1) * lines / parts * kLineFloats));
}

// The runs of consecutive pairs of one position (on an owner: a bag's keys from one requester).
struct Runs {
  std::vector<std::size_t> start;     // run r is pairs [start[r], start[r + 1])
  std::vector<std::uint8_t> covered;  // per output row: 1 when some run pools into it
  bool one_run_per_position = true;   // then runs may be pooled on any thread: no output value is shared
};

Runs runs_of(std::span<const std::int64_t> positions, std::size_t out_rows) {
  Runs runs;
  runs.covered.assign(out_rows, 0);
  for (std::size_t j = 0; j < positions.size(); ++j) {
    if (j > 0 && positions[j] == positions[j - 1]) continue;
    const auto p = static_cast<std::size_t>(positions[j]);
    EMBSCALE_EXPECTS(p < out_rows, "a pair's position lies outside the output");
    runs.one_run_per_position = runs.one_run_per_position && !runs.covered[p];
    runs.covered[p] = 1;
    runs.start.push_back(j);
  }
  runs.start.push_back(positions.size());
  return runs;
}

// Eight floats as one value (GCC's vector extension): what keeps a block's accumulators in
// registers whatever the compiler proves about aliasing (one ymm at AVX2, two xmm at baseline).
// Loaded and stored with memcpy: rows need no alignment (the load folds into the addition).
using Float8 = float __attribute__((vector_size(32)));
constexpr std::size_t kPairsAhead = 16;  // pairs between a row's prefetch and its use (FBGEMM's distance)

// The pairs [j, end) of one run, columns [c, c + 8 kBlocks) of out: kBlocks accumulators, out's
// values loaded and stored once per run, every value taking its additions in pair order. Rows are
// random reads from a table far larger than the caches: each row read prefetches the same columns
// of the row kPairsAhead pairs ahead (clamped to `stop`, this thread's last pair), one prefetch per
// cache line interleaved with the additions, as FBGEMM's CPU kernel does; so about kPairsAhead
// rows are in flight and the loop never waits on an address it could have known.
template <std::size_t kBlocks, bool kFresh, class PairRow>
EMBSCALE_ALWAYS_INLINE inline void pool_run_block(const PairRow& row, std::size_t j, std::size_t end, std::size_t stop,
                                                  std::size_t c, float* o) {
  static_assert(kBlocks % 2 == 0 || kBlocks == 1, "blocks pair up into 64-byte lines");
  Float8 acc[kBlocks], v;
  // A fresh output row starts from +0 (the same bits as adding to a zeroed row) without reading
  // it: out's rows are cold, and a load would be a cache miss at every run's start.
  for (std::size_t b = 0; b < kBlocks; ++b)
    if constexpr (kFresh) acc[b] = Float8{};
    else std::memcpy(&acc[b], o + c + 8 * b, sizeof v);
  for (std::size_t m = j; m < end; ++m) {
    const float* r = row(m) + c;
    const float* ahead = row(std::min(m + kPairsAhead, stop - 1)) + c;
    // Opaque to the optimiser: otherwise it keeps c + 8 b for every b in a register of its own
    // (loop invariants), runs out of registers and reloads them from the stack at every row;
    // opaque, each load and prefetch is one instruction with a constant displacement.
    asm("" : "+r"(r), "+r"(ahead));
#pragma GCC unroll 16
    for (std::size_t b = 0; b < kBlocks; ++b) {
      std::memcpy(&v, r + 8 * b, sizeof v);
      acc[b] += v;
      if (b % 2 == 0) __builtin_prefetch(ahead + 8 * b);
    }
  }
  for (std::size_t b = 0; b < kBlocks; ++b) std::memcpy(o + c + 8 * b, &acc[b], sizeof v);
}

// Pools runs [first_run, last_run), columns [first, last), the row of pair m found by row(m) (a
// pointer to its values). kFresh: each run's output row starts from +0 (its position's only
// run); else from out's values. Each run is one pass per column block: kWidest x 8 columns while
// they last (a whole row of dim 128 in one pass at AVX2: 16 ymm accumulators, FBGEMM's register
// blocking), then halving blocks, then single columns. Compiled for the CPU's SIMD level
// (core/simd_level.hpp): additions only, the same bits on every path.
template <std::size_t kWidest, bool kFresh, class PairRow>
EMBSCALE_ALWAYS_INLINE inline void pool_runs_at(std::span<const std::int64_t> positions, const PairRow& row,
                                                std::size_t width, float* out, const Runs& runs, std::size_t first_run,
                                                std::size_t last_run, std::size_t first, std::size_t last) {
  const std::size_t stop = runs.start[last_run];  // prefetches stay within this thread's pairs
  for (std::size_t k = first_run; k < last_run; ++k) {
    const std::size_t j = runs.start[k], end = runs.start[k + 1];
    float* o = out + static_cast<std::size_t>(positions[j]) * width;
    // The next run's output row, for writing: its lines are cold (and scattered: on an owner a
    // run's position jumps by a whole sample of slots), and a store to a cold line waits for the
    // line to be read first. Fetched a run ahead, that read overlaps this run's row reads.
    if (k + 1 < last_run) {
      const float* next = out + static_cast<std::size_t>(positions[runs.start[k + 1]]) * width;
      for (std::size_t d = first; d < last; d += kLineFloats) __builtin_prefetch(next + d, 1);
    }
    std::size_t c = first;
    const auto blocks = [&]<std::size_t kBlocks>() EMBSCALE_ALWAYS_INLINE {
      for (; c + 8 * kBlocks <= last; c += 8 * kBlocks) pool_run_block<kBlocks, kFresh>(row, j, end, stop, c, o);
    };
    blocks.template operator()<kWidest>();
    if constexpr (kWidest > 8) blocks.template operator()<8>();
    if constexpr (kWidest > 4) blocks.template operator()<4>();
    if constexpr (kWidest > 2) blocks.template operator()<2>();
    blocks.template operator()<1>();
    if (c == last) continue;
    if constexpr (kFresh) std::fill(o + c, o + last, 0.0f);
    for (std::size_t m = j; m < end; ++m) {
      const float* r = row(m);
      for (std::size_t d = c; d < last; ++d) o[d] += r[d];
    }
  }
}

// pool_runs_at for this CPU: 16 accumulators where the level has 16 or more 256-bit registers,
// 4 at baseline (each Float8 takes two of its 16 xmm registers).
template <bool kFresh, class PairRow>
void pool_runs(std::span<const std::int64_t> positions, const PairRow& row, std::size_t width, float* out,
               const Runs& runs, std::size_t first_run, std::size_t last_run, std::size_t first, std::size_t last) {
  const SimdLevel level = simd_level();
  if (level == SimdLevel::kBaseline)
    return run_at(level, [&]() EMBSCALE_ALWAYS_INLINE {
      pool_runs_at<4, kFresh>(positions, row, width, out, runs, first_run, last_run, first, last);
    });
  run_at(level, [&]() EMBSCALE_ALWAYS_INLINE {
    pool_runs_at<16, kFresh>(positions, row, width, out, runs, first_run, last_run, first, last);
  });
}

// One run per position (the engine's owners: a bag's keys arrive together): every run writes its
// output row fresh, the rows of no run are zeroed, and threads take whole runs each (each output
// row then belongs to one thread). Else out is zeroed and every run adds to it, threads taking a
// share of the columns of every run (over_column_ranges).
template <class PairRow>
void pool_pairs_from(std::span<const std::int64_t> positions, const PairRow& row, std::size_t width,
                     std::span<float> out, int threads) {
  EMBSCALE_EXPECTS(width >= 1, "pooling needs width >= 1");
  const Runs runs = runs_of(positions, out.size() / width);
  const std::size_t count = runs.start.size() - 1;
  if (!runs.one_run_per_position) {
    std::fill(out.begin(), out.end(), 0.0f);
    over_column_ranges(width, threads, [&](std::size_t first, std::size_t last) {
      pool_runs<false>(positions, row, width, out.data(), runs, 0, count, first, last);
    });
    return;
  }
  for (std::size_t p = 0; p < runs.covered.size(); ++p)
    if (!runs.covered[p]) std::fill_n(out.data() + p * width, width, 0.0f);
  if (threads <= 1) return pool_runs<true>(positions, row, width, out.data(), runs, 0, count, 0, width);
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num()), n = static_cast<std::size_t>(omp_get_num_threads());
    pool_runs<true>(positions, row, width, out.data(), runs, count * t / n, count * (t + 1) / n, 0, width);
  }
}

}  // namespace

void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float> rows, std::size_t width, std::span<float> out, int threads) {
  EMBSCALE_EXPECTS(inverse.size() == positions.size(), "one distinct id per pair");
  pool_pairs_from(
      positions, [&](std::size_t m) EMBSCALE_ALWAYS_INLINE { return rows.data() + std::size_t{inverse[m]} * width; },
      width, out, threads);
}

void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float* const> rows, std::size_t width, std::span<float> out, int threads) {
  EMBSCALE_EXPECTS(inverse.size() == positions.size(), "one distinct id per pair");
  pool_pairs_from(
      positions, [&](std::size_t m) EMBSCALE_ALWAYS_INLINE { return rows[inverse[m]]; }, width, out, threads);
}

void pool_pairs(std::span<const std::int64_t> positions, std::span<const float* const> pair_rows, std::size_t width,
                std::span<float> out, int threads) {
  EMBSCALE_EXPECTS(pair_rows.size() == positions.size(), "one row per pair");
  pool_pairs_from(
      positions, [&](std::size_t m) EMBSCALE_ALWAYS_INLINE { return pair_rows[m]; }, width, out, threads);
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
    const float scale = portable::bag_scale(n);
    float* v = values.data() + static_cast<std::size_t>(b) * dim;
    for (std::size_t d = 0; d < dim; ++d) v[d] *= scale;
  }
}

}  // namespace embscale::embedding
