// The objective that stands in for the dense part of the model in embedding-only runs: each
// pooled vector regresses onto a target given by its sample's click label,
//   target = +0.5 (label 1) or -0.5 (label 0) in every component,
//   loss   = (1 / global_batch) * sum over bags of 0.5 * ||pooled - target||^2.
// It gives the backward pass a real gradient that depends on the table, so a training run
// visibly reduces the loss, and it is trivial to reproduce in a single-process reference.
#pragma once

#include <cstdint>
#include <span>

#include "core/batch.hpp"
#include "embedding/portable/step_ref.hpp"

namespace embscale::embedding {

inline float regression_target(const Batch& batch, std::int64_t sample) {
  return portable::regression_target_of(batch.labels[static_cast<std::size_t>(sample * batch.label_dim)]);
}

// The same objective over any per-sample output: `values` holds `width` values per sample of the
// batch ([num_samples x width]: a dense model's output without a loss layer), each regressing onto its sample's target.
double regression_loss_and_gradient_per_sample(const Batch& batch, std::span<const float> values, std::int64_t width,
                                               std::int64_t global_batch, std::span<float> grad);

// Writes dLoss/dpooled into grad (same shape as pooled: [num_bags, dim]) and returns this
// rank's share of the loss (sum over its bags, already divided by the global batch).
double regression_loss_and_gradient(const Batch& batch, std::span<const float> pooled, std::int32_t dim,
                                    std::int64_t global_batch, std::span<float> grad);

}  // namespace embscale::embedding
