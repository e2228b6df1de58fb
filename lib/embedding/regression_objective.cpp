#include "embedding/regression_objective.hpp"

#include "core/error.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {

double regression_loss_and_gradient_per_sample(const Batch& batch, std::span<const float> values, std::int64_t width,
                                               std::int64_t global_batch, std::span<float> grad) {
  const auto uwidth = static_cast<std::size_t>(width);
  EMBSCALE_EXPECTS(
      values.size() == static_cast<std::size_t>(batch.num_samples) * uwidth && grad.size() == values.size(),
      "values and gradient must hold num_samples * width values");
  EMBSCALE_EXPECTS(batch.label_dim >= 1, "the regression objective needs a label");
  const double inv_batch = 1.0 / static_cast<double>(global_batch);
  // Per-sample sums added in sample order: the device step (portable/step_ref.hpp) computes each
  // sample's sum in a thread and the host adds them in the same order, so both give the same loss.
  double loss = 0.0;
  for (std::int64_t s = 0; s < batch.num_samples; ++s) {
    const std::size_t base = static_cast<std::size_t>(s) * uwidth;
    loss += portable::regression_sample(values.data() + base, uwidth, regression_target(batch, s), inv_batch,
                                        grad.data() + base);
  }
  return loss * inv_batch;
}

// A bag's pooled vectors are its sample's values: [sample][slot][dim] is [sample][slots x dim].
double regression_loss_and_gradient(const Batch& batch, std::span<const float> pooled, std::int32_t dim,
                                    std::int64_t global_batch, std::span<float> grad) {
  EMBSCALE_EXPECTS(pooled.size() == static_cast<std::size_t>(batch.num_bags()) * static_cast<std::size_t>(dim),
                   "pooled and gradient must hold num_bags * dim values");
  return regression_loss_and_gradient_per_sample(batch, pooled, static_cast<std::int64_t>(batch.num_slots) * dim,
                                                 global_batch, grad);
}

}  // namespace embscale::embedding
