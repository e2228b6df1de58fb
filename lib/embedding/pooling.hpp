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
void pool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> rows,
               std::size_t dim, bool mean, std::span<float> pooled);
// Its backward: grads[inverse[k]] += grad of k's bag (mean: / bag size); grads is zeroed first.
void unpool_bags(const Batch& batch, std::span<const std::uint32_t> inverse, std::span<const float> grad_pooled,
                 std::size_t dim, bool mean, std::span<float> grads);

// Owner-side pooling of (key, position) pairs: out[position[j]] += rows[inverse[j]], rows of
// `width` values. `out` is not zeroed here.
void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float> rows, std::size_t width, std::span<float> out);
// Its backward: grads[inverse[j]] += grad_out[position[j]]; grads is zeroed first.
void unpool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                  std::span<const float> grad_out, std::size_t width, std::span<float> grads);

// Mean combiner applied after a sum: every bag of `values` ([num_bags x dim]) times 1 / its size.
void divide_by_bag_size(const Batch& batch, std::size_t dim, std::span<float> values);

}  // namespace embscale::embedding
