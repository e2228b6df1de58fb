// The optimizers as the GPU tests drive them: an OptimizerRef of each kind with fixed
// hyper-parameters (what SparseOptimizer::portable_ref would give for them), and its scalars at a
// step. Shared by optimizer_ref_gpu_test.cu and embedding_rows_gpu_test.cu.
#pragma once

#include <cmath>
#include <cstdint>

#include "embedding/portable/optimizer_ref.hpp"

namespace embscale::gpu_check {

namespace portable = embscale::embedding::portable;

inline portable::OptimizerRef ref_of(portable::OptimizerKind kind, bool global, int dim) {
  using portable::OptimizerKind;
  portable::OptimizerRef o;
  o.kind = kind;
  o.global = global;
  o.lr = 0.037f;
  o.lr_double = static_cast<double>(o.lr);
  o.factor = 0.87f;
  o.epsilon = 1e-6f;
  o.initial_accumulator = 0.125f;
  o.beta1 = 0.91;
  o.beta2 = 0.997;
  o.adam = {0.91f, 0.997f, static_cast<float>(1.0 - 0.91), static_cast<float>(1.0 - 0.997), 1e-6f};
  switch (kind) {
    case OptimizerKind::kSgd: o.state_width = 0; break;
    case OptimizerKind::kMomentum:
    case OptimizerKind::kNesterov:
    case OptimizerKind::kAdaGrad: o.state_width = dim; break;
    case OptimizerKind::kAdam: o.state_width = 2 * dim; break;
    case OptimizerKind::kLazyAdam: o.state_width = 2 * dim + portable::kStepDigits; break;
    case OptimizerKind::kRowWiseAdaGrad: o.state_width = 1; break;
  }
  return o;
}

// `o` at `step`: the step, and Adam's bias-corrected size as the host computes it once per step.
inline void at_step(portable::OptimizerRef& o, std::int64_t step) {
  const auto t = static_cast<double>(step);
  o.step = step;
  o.adam_lr_t = static_cast<float>(o.lr_double * std::sqrt(1.0 - std::pow(o.beta2, t)) / (1.0 - std::pow(o.beta1, t)));
}

}  // namespace embscale::gpu_check
