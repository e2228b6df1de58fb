// Sparse optimizers: the update an owner applies to the rows a step touched, with the state each
// row keeps beside it (HugeCTR's SGD, MomentumSGD, Nesterov, Adam, AdaGrad and FBGEMM's row-wise
// AdaGrad; hyper-parameters as HugeCTR's *_hparam). Storage-agnostic: the static table and the KV
// table both store a row as [dim embedding values | state_width() state values] and hand the two
// halves to update().
//
// Update types (HugeCTR's update_type):
//   Local       only the rows the step touched are updated;
//   Global      every row of the table is updated every step: untouched rows with a zero gradient
//               (update_untouched: momentum and Adam keep moving them);
//   LazyGlobal  touched rows only, but a row first catches up on the decay of the steps it missed
//               (Adam: m and v decay by beta^missed) when it is next touched.
// Gradients of duplicate keys are combined (summed) by the caller before update().
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "config/config.hpp"

namespace embscale::embedding {

enum class UpdateType { kLocal, kGlobal, kLazyGlobal };

class SparseOptimizer {
 public:
  virtual ~SparseOptimizer() = default;

  virtual const char* name() const noexcept = 0;
  virtual UpdateType update_type() const noexcept = 0;
  // Values of state stored after each row's dim values (0 for SGD).
  virtual std::int32_t state_width() const noexcept = 0;
  // Writes the state a new row starts with (AdaGrad: initial_accu_value; most: zeros).
  virtual void init_state(std::span<float> state) const noexcept = 0;
  // One step of a touched row: `grad` (dim values) is the combined gradient of this step; `step`
  // is the 1-based global iteration (Adam's bias correction, LazyGlobal's catch-up).
  virtual void update(std::span<float> row, std::span<float> state, std::span<const float> grad,
                      std::int64_t step) const noexcept = 0;
  // Global update only: a row the step did not touch (a zero gradient).
  virtual void update_untouched(std::span<float> row, std::span<float> state, std::int64_t step) const noexcept = 0;
};

// The optimizer of a layer of embedding dimension `dim`.
std::unique_ptr<SparseOptimizer> make_sparse_optimizer(const config::Optimizer& options, std::int32_t dim);

}  // namespace embscale::embedding
