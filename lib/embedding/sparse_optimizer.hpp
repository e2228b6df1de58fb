// Sparse optimizers: the update an owner applies to the rows a step touched, with the state each
// row keeps beside it (HugeCTR's SGD, MomentumSGD, Nesterov, Adam, AdaGrad and FBGEMM's row-wise
// AdaGrad; hyper-parameters as HugeCTR's *_hparam). Storage-agnostic: the static table and the KV
// table both store a row as [dim embedding values | state_width() state values] and hand the two
// halves to update(). The formulas, their sources and the engine's side of the contract are in
// lib/embedding/optimizers/README.md.
//
// Update types (HugeCTR's update_type):
//   Local       only the rows the step touched are updated;
//   Global      every row of the table is updated every step: a row the step did not touch gets
//               update_untouched(), which equals update() with a zero gradient (momentum and Adam
//               keep moving it; SGD and the AdaGrads leave it as it is);
//   LazyGlobal  (Adam only) touched rows only, but a row catches up on the steps it missed when it
//               is next touched: m and v decay by beta^missed, and the weight takes the movement
//               of the missed steps (HugeCTR's opt_adam_kernel_lazy). The row's state holds the
//               step it was last touched.
// Gradients of duplicate keys are combined (summed) by the caller before update().
//
// State is plain values in the row's storage type: the engine may store rows and state as fp16 or
// bf16 and convert to float around update(). Every state value survives that (LazyGlobal's step is
// stored as base-256 digits, exact in bf16), but m, v and the accumulators then carry the storage
// type's rounding, as they would in HugeCTR's fp16 embeddings.
//
// Thread safety: the methods are const and keep no shared mutable state, so several threads may
// update disjoint rows at once.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "config/config.hpp"
#include "embedding/portable/optimizer_ref.hpp"

namespace embscale::embedding {

using UpdateType = config::UpdateType;  // kLocal, kGlobal, kLazyGlobal

class SparseOptimizer {
 public:
  virtual ~SparseOptimizer() = default;

  // The config's type name ("Adam", "RowWiseAdaGrad", ...).
  virtual const char* name() const noexcept = 0;
  virtual UpdateType update_type() const noexcept = 0;
  // Values of state stored after each row's dim values (0 for SGD).
  virtual std::int32_t state_width() const noexcept = 0;
  // Writes the state a new row starts with (AdaGrad: initial_accu_value; LazyGlobal Adam: zeros
  // and "last touched at step 1", as HugeCTR; the others: zeros). state.size() == state_width().
  virtual void init_state(std::span<float> state) const noexcept = 0;
  // One step of a touched row: `grad` (dim values) is the combined gradient of this step; `step`
  // is the 1-based global iteration, warm-up included (Adam's bias correction 1 - beta^step,
  // LazyGlobal's missed steps). Across the calls on one row, steps strictly increase.
  // Preconditions (not checked: a hot loop): row.size() == grad.size() == dim,
  // state.size() == state_width().
  virtual void update(std::span<float> row, std::span<float> state, std::span<const float> grad,
                      std::int64_t step) const noexcept = 0;
  // What the update type does to a row the step did not touch. Global: update() with a zero
  // gradient. Local and LazyGlobal: nothing (the engine need not call it then).
  virtual void update_untouched(std::span<float> row, std::span<float> state, std::int64_t step) const noexcept = 0;
  // Whether update_untouched() can change a row: true only for Global MomentumSGD, Nesterov and
  // Adam. When false, the engine may skip the sweep over untouched rows (SGD and the AdaGrads under
  // Global behave as under Local, as in HugeCTR).
  virtual bool changes_untouched_rows() const noexcept = 0;
  // This optimizer at `step` as plain data (embedding/portable/optimizer_ref.hpp): what a device
  // kernel runs with portable::update_row, untouched_row and init_state_row, the same formulas
  // update(), update_untouched() and init_state() run here.
  virtual portable::OptimizerRef portable_ref(std::int64_t step) const = 0;
};

// The optimizer of a layer of embedding dimension `dim` (>= 1). Throws InputError when the
// options cannot make one (LazyGlobal for another type than Adam, a hyper-parameter out of the
// range lib/config/README.md states), naming the field: the config parser refuses these first,
// this guards options built in code.
std::unique_ptr<SparseOptimizer> make_sparse_optimizer(const config::Optimizer& options, std::int32_t dim);

}  // namespace embscale::embedding
