// What the sparse optimizers share (internal to lib/embedding): the name, update type and state
// width, and the one rule of the Global update, "an untouched row takes a step with a zero
// gradient", written once. Each family (sgd.cpp, momentum.cpp, adam.cpp, adam_lazy.cpp,
// adagrad.cpp) defines its apply() over the gradient type, so that update() and update_untouched()
// cannot drift apart; the formula itself is embedding/portable/optimizer_ref.hpp's, which a device
// kernel runs too.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>

#include "config/config.hpp"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/sparse_optimizer.hpp"

namespace embscale::embedding::optimizers {

// The gradient of a row the step did not touch (every value 0), as the portable updates take it.
using ZeroGradient = portable::ZeroGradient;

class OptimizerBase : public SparseOptimizer {
 public:
  OptimizerBase(const config::Optimizer& options, std::int32_t state_width)
      : name_(config::to_string(options.type)), update_type_(options.update_type), state_width_(state_width),
        learning_rate_(static_cast<float>(options.learning_rate)) {}

  const char* name() const noexcept override { return name_.c_str(); }
  UpdateType update_type() const noexcept override { return update_type_; }
  std::int32_t state_width() const noexcept override { return state_width_; }
  void init_state(std::span<float> state) const noexcept override { std::fill(state.begin(), state.end(), 0.0f); }

 protected:
  float learning_rate() const noexcept { return learning_rate_; }
  // The fields every kind fills: its kind, the update type, the state width, lr and the step.
  portable::OptimizerRef base_ref(portable::OptimizerKind kind, std::int64_t step) const noexcept {
    portable::OptimizerRef r;
    r.kind = kind;
    r.global = update_type_ == UpdateType::kGlobal;
    r.state_width = state_width_;
    r.lr = learning_rate_;
    r.step = step;
    return r;
  }

 private:
  std::string name_;
  UpdateType update_type_;
  std::int32_t state_width_;
  float learning_rate_;
};

// Derived provides
//   template <class Gradient> void apply(row, state, const Gradient& g, step) const noexcept
// (Gradient: std::span<const float> or ZeroGradient) and
//   static constexpr bool kZeroGradientMovesRow: whether apply() with a zero gradient can change a
//   row (momentum and Adam: yes; SGD and the AdaGrads: no, so the untouched sweep is skipped).
template <class Derived> class ZeroGradientGlobal : public OptimizerBase {
 public:
  using OptimizerBase::OptimizerBase;

  void update(std::span<float> row, std::span<float> state, std::span<const float> grad,
              std::int64_t step) const noexcept final {
    static_cast<const Derived&>(*this).apply(row, state, grad, step);
  }
  void update_untouched(std::span<float> row, std::span<float> state, std::int64_t step) const noexcept final {
    if (changes_untouched_rows()) static_cast<const Derived&>(*this).apply(row, state, ZeroGradient{}, step);
  }
  bool changes_untouched_rows() const noexcept final {
    return Derived::kZeroGradientMovesRow && update_type() == UpdateType::kGlobal;
  }
};

// The families' factories; make_sparse_optimizer has validated `options` and picks one by type.
std::unique_ptr<SparseOptimizer> make_sgd(const config::Optimizer& options);
std::unique_ptr<SparseOptimizer> make_momentum_sgd(const config::Optimizer& options, std::int32_t dim);
std::unique_ptr<SparseOptimizer> make_nesterov(const config::Optimizer& options, std::int32_t dim);
std::unique_ptr<SparseOptimizer> make_adam(const config::Optimizer& options, std::int32_t dim);  // Local, Global
std::unique_ptr<SparseOptimizer> make_lazy_adam(const config::Optimizer& options, std::int32_t dim);
std::unique_ptr<SparseOptimizer> make_adagrad(const config::Optimizer& options, std::int32_t dim);
std::unique_ptr<SparseOptimizer> make_rowwise_adagrad(const config::Optimizer& options);

}  // namespace embscale::embedding::optimizers
