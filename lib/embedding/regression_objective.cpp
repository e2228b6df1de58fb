#include "embedding/regression_objective.hpp"

#include "core/error.hpp"

namespace embscale::embedding {

double regression_loss_and_gradient(const Batch& batch, std::span<const float> pooled, std::int32_t dim,
                                    std::int64_t global_batch, std::span<float> grad) {
  const auto udim = static_cast<std::size_t>(dim);
  EMBSCALE_EXPECTS(pooled.size() == static_cast<std::size_t>(batch.num_bags()) * udim && grad.size() == pooled.size(),
                   "pooled and gradient must hold num_bags * dim values");
  EMBSCALE_EXPECTS(batch.label_dim >= 1, "the regression objective needs a label");
  const double inv_batch = 1.0 / static_cast<double>(global_batch);
  double loss = 0.0;
  for (std::int64_t s = 0; s < batch.num_samples; ++s) {
    const float target = regression_target(batch, s);
    for (std::int32_t slot = 0; slot < batch.num_slots; ++slot) {
      const std::size_t base = static_cast<std::size_t>(s * batch.num_slots + slot) * udim;
      for (std::size_t d = 0; d < udim; ++d) {
        const double diff = static_cast<double>(pooled[base + d]) - target;
        loss += 0.5 * diff * diff;
        grad[base + d] = static_cast<float>(diff * inv_batch);
      }
    }
  }
  return loss * inv_batch;
}

}  // namespace embscale::embedding
