// Pooling and its backward, the arithmetic every scheme shares. A bag's pooled vector is the sum
// of its keys' rows (mean: divided by the bag's size); its backward gives each key occurrence the
// bag's gradient (mean: divided by the size), summed per distinct key.
#pragma once

#include <cstdint>
#include <span>

#include "core/batch.hpp"

namespace embscale::embedding {

// Requester-side pooling: pooled[b] = combine over k in bag b of rows[inverse[k]] (rows: the
// distinct keys' rows, dim each). pooled: [num_bags x dim].
void pool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> rows, std::size_t dim,
               bool mean, std::span<float> pooled);
// Its backward: grads[inverse[k]] += grad of k's bag (mean: / bag size); grads is zeroed first.
void unpool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> grad_pooled,
                 std::size_t dim, bool mean, std::span<float> grads);

// Owner-side pooling of (key, position) pairs: out[p] = the sum of rows[inverse[j]] over the pairs
// j with positions[j] == p, taken in pair order from +0 (rows of no pair: 0); out is overwritten,
// so the caller need not zero it. The result is the same bits on any thread count. `threads` > 1:
// OpenMP threads, each pooling whole runs of consecutive pairs of one position when no position
// has two runs (an owner's pairs: a bag's keys arrive together), else a share of the columns
// (whole cache lines) of every pair.
void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float> rows, std::size_t width, std::span<float> out, int threads = 1);
// The same, reading each distinct key's row where the store keeps it (RowStore::row_pointers):
// rows[i] points at the `width` values of distinct key i.
void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float* const> rows, std::size_t width, std::span<float> out, int threads = 1);
// The same with a row per pair (no de-duplication): pair_rows[j] points at pair j's row.
void pool_pairs(std::span<const std::int64_t> positions, std::span<const float* const> pair_rows, std::size_t width,
                std::span<float> out, int threads = 1);
// Its backward: grads[i] = sum of grad_out[position[j]] over the pairs j with inverse[j] == i.
// Precondition (KeyRouter's de-duplicated inverse): the ids [0, grads.size() / width) first
// appear in increasing order, each at least once; a pair whose id appears for the first time
// writes its row (grads need not be zeroed: no pass over it before the scatter). An Error when
// the ids break it. `threads` > 1 splits the columns (whole cache lines) among OpenMP threads.
void unpool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                  std::span<const float> grad_out, std::size_t width, std::span<float> grads, int threads = 1);

// Mean combiner applied after a sum: every bag of `values` ([num_bags x dim]) times 1 / its size.
void divide_by_bag_size(const Batch& batch, std::size_t dim, std::span<float> values);

}  // namespace embscale::embedding
