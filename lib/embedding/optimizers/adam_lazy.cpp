// Adam under HugeCTR's LazyGlobal update: opt_adam_kernel_lazy
// (HugeCTR/src/optimizers/sparse_optimizer.cu). Only touched rows are updated; a row remembers the
// step p it was last touched (1 for a new row, as HugeCTR initialises it), and at step t, with
// s = t - p the steps since:
//   w -= lr / (1 - b1) * sqrt(1 - b2^p) / (1 - b1^p) * (1 - b1^s) * m / (sqrt(v) + eps)   (m, v of step p)
//   m = b1^s m + (1 - b1) g;  v = b2^s v + (1 - b2) g^2;  p = t
// m and v come out exactly as under Global (s - 1 zero-gradient steps, then this one). The weight
// takes the movement Global would have given it over steps p .. t - 1, with m decaying by b1 per
// step ((1 - b1^s) / (1 - b1) = sum over k < s of b1^k) but v and the bias correction held at step
// p. So the weight lags one touch behind: the movement of step t is applied at the row's next
// touch, as in HugeCTR.
//
// State: m (dim values), v (dim values), then p as kStepDigits values (step_digits.hpp), instead of
// HugeCTR's uint64 per embedding value.
#include "embedding/optimizers/optimizer_base.hpp"
#include "embedding/optimizers/step_digits.hpp"

namespace embscale::embedding::optimizers {
namespace {

class LazyAdam final : public OptimizerBase {
 public:
  LazyAdam(const config::Optimizer& options, std::int32_t dim)
      : OptimizerBase(options, 2 * dim + kStepDigits), dim_(static_cast<std::size_t>(dim)) {
    ref_ = base_ref(portable::OptimizerKind::kLazyAdam, 0);
    // 1 - beta rounded from double, as in adam.cpp.
    ref_.adam = {static_cast<float>(options.beta1), static_cast<float>(options.beta2),
                 static_cast<float>(1.0 - options.beta1), static_cast<float>(1.0 - options.beta2),
                 static_cast<float>(options.epsilon)};
    ref_.beta1 = options.beta1;
    ref_.beta2 = options.beta2;
    ref_.lr_double = learning_rate();
  }

  void init_state(std::span<float> state) const noexcept override {
    std::fill(state.begin(), state.end(), 0.0f);
    store_step(1, state.subspan(2 * dim_));
  }

  void update(std::span<float> row, std::span<float> state, std::span<const float> g,
              std::int64_t step) const noexcept override {
    portable::lazy_adam_step(ref_, step, row.data(), state.data(), g, dim_);
  }

  portable::OptimizerRef portable_ref(std::int64_t step) const noexcept override {
    auto r = ref_;
    r.step = step;
    return r;
  }

  // Lazy: an untouched row waits for its next touch.
  void update_untouched(std::span<float>, std::span<float>, std::int64_t) const noexcept override {}
  bool changes_untouched_rows() const noexcept override { return false; }

 private:
  std::size_t dim_;
  // Everything but the step, made once: update() runs per touched row, and passes the step apart.
  portable::OptimizerRef ref_;
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_lazy_adam(const config::Optimizer& options, std::int32_t dim) {
  return std::make_unique<LazyAdam>(options, dim);
}

}  // namespace embscale::embedding::optimizers
