#include "embedding/pooling.hpp"

#include <algorithm>

#include "core/error.hpp"

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

void pool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                std::span<const float> rows, std::size_t width, std::span<float> out) {
  for (std::size_t j = 0; j < positions.size(); ++j) {
    float* o = out.data() + static_cast<std::size_t>(positions[j]) * width;
    const float* v = rows.data() + inverse[j] * width;
    for (std::size_t d = 0; d < width; ++d) o[d] += v[d];
  }
}

void unpool_pairs(std::span<const std::int64_t> positions, std::span<const std::uint32_t> inverse,
                  std::span<const float> grad_out, std::size_t width, std::span<float> grads) {
  std::fill(grads.begin(), grads.end(), 0.0f);
  for (std::size_t j = 0; j < positions.size(); ++j) {
    const float* g = grad_out.data() + static_cast<std::size_t>(positions[j]) * width;
    float* o = grads.data() + inverse[j] * width;
    for (std::size_t d = 0; d < width; ++d) o[d] += g[d];
  }
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
