// The dense part's optimizer: the config's global optimizer (HugeCTR's: one optimizer for the
// dense layers and, unless an embedding layer names its own, the embeddings) applied element by
// element to every parameter of a ParameterStore, both buffers (replicated and local), after the
// graph's backward has completed their gradients. The rules are the sparse optimizers'
// (lib/embedding/optimizers/README.md) on a dense array:
//   SGD          w -= lr_t g, lr_t SGD's learning-rate schedule (config::Optimizer::learning_rate_at)
//   MomentumSGD  a = f a - lr g; w += a
//   Nesterov     a' = mu a - lr g; w += -mu a + (1 + mu) a'
//   Adam         m = b1 m + (1 - b1) g; v = b2 v + (1 - b2) g^2;
//                w -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(v) + eps)
//   AdaGrad      s += g^2; w -= lr g / (sqrt(s) + eps), s from initial_accu_value
// RowWiseAdaGrad (FBGEMM's, for embedding rows) has no rows here: the dense part runs AdaGrad.
// Update types (Local, Global, LazyGlobal) are the embeddings' choice; every dense parameter has
// a gradient every step.
#pragma once

#include <array>

#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "model/dense_op.hpp"

namespace embscale::model {

template <typename T> class DenseOptimizer {
 public:
  explicit DenseOptimizer(const config::Optimizer& settings) : settings_(settings) {}
  // Every parameter of `store` one step (1-based `step`) along its gradient.
  void apply(ParameterStore<T>& store, std::int64_t step);
  // One flat array of parameters (a parameter server's slice of the replicated ones) one step
  // along `grads`; its state is the replicated buffer's (use one optimizer per array).
  void apply(std::span<T> values, std::span<const T> grads, std::int64_t step) {
    apply(values, grads, replicated_, step);
  }
  // Its state arrays (Adam's m and v, the momentum, AdaGrad's sums; of the replicated and the
  // local parameters), each empty until the first step that needs it: what a checkpoint keeps.
  std::array<std::vector<T>*, 4> state() noexcept {
    return {&replicated_.first, &replicated_.second, &local_.first, &local_.second};
  }

 private:
  struct State {
    std::vector<T> first, second;  // Adam's m and v; the momentum; AdaGrad's sums
  };
  void apply(std::span<T> w, std::span<const T> g, State& state, std::int64_t step);
  config::Optimizer settings_;
  State replicated_, local_;
};

}  // namespace embscale::model
