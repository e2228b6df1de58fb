// Adam under the Local and Global updates, as HugeCTR's opt_adam_kernel
// (HugeCTR/src/optimizers/sparse_optimizer.cu) with AdamOptHyperParams::bias()
// (HugeCTR/include/optimizer.hpp). State: m (dim values), then v (dim values), starting at 0.
// At step t (1-based; HugeCTR increments its counter before each update):
//   m = b1 m + (1 - b1) g;  v = b2 v + (1 - b2) g^2
//   lr_t = lr sqrt(1 - b2^t) / (1 - b1^t)
//   w -= lr_t m / (sqrt(v) + eps)
// Global: HugeCTR's opt_adam_kernel_global adds (1 - b1) g / b1 to m and (1 - b2) g^2 / b2 to v of
// the touched rows, then adam_update_kernel_global multiplies every row's m by b1 and v by b2 and
// moves w as above: the same formula for a touched row and the formula with g = 0 for an untouched
// one (m, v decay, w keeps moving), which is how it is computed here (without the division by the
// betas, which fails for beta1 = 0).
#include <atomic>
#include <cmath>

#include "embedding/optimizers/optimizer_base.hpp"

namespace embscale::embedding::optimizers {
namespace {

class Adam final : public ZeroGradientGlobal<Adam> {
 public:
  static constexpr bool kZeroGradientMovesRow = true;

  Adam(const config::Optimizer& options, std::int32_t dim)
      : ZeroGradientGlobal(options, 2 * dim), beta1_(options.beta1),
        beta2_(options.beta2), params_{static_cast<float>(options.beta1), static_cast<float>(options.beta2),
                                       static_cast<float>(1.0 - options.beta1), static_cast<float>(1.0 - options.beta2),
                                       static_cast<float>(options.epsilon)} {}

  template <class Gradient>
  void apply(std::span<float> row, std::span<float> state, const Gradient& g, std::int64_t step) const noexcept {
    portable::adam_row(row.data(), state.data(), g, row.size(), params_, step_size(step));
  }
  portable::OptimizerRef portable_ref(std::int64_t step) const noexcept override {
    auto r = base_ref(portable::OptimizerKind::kAdam, step);
    r.adam = params_;
    r.adam_lr_t = step_size(step);
    return r;
  }

 private:
  // lr_t of `step`. Every row of a step has the same one, and two pow() per row would cost more
  // than the row's arithmetic, so each thread keeps the last step's value, keyed by this
  // optimizer's id (unique for the process's life, unlike its address).
  float step_size(std::int64_t step) const noexcept {
    struct Cached {
      std::uint64_t owner = 0;
      std::int64_t step = 0;
      float value = 0.0f;
    };
    thread_local Cached cached;
    if (cached.owner != id_ || cached.step != step) {
      const double t = static_cast<double>(step);
      const double bias = std::sqrt(1.0 - std::pow(beta2_, t)) / (1.0 - std::pow(beta1_, t));
      cached = {id_, step, static_cast<float>(learning_rate() * bias)};
    }
    return cached.value;
  }

  static std::uint64_t next_id() noexcept {
    static std::atomic<std::uint64_t> counter{0};
    return ++counter;  // from 1: 0 is the empty cache's owner
  }

  double beta1_;
  double beta2_;
  // 1 - beta in double, then rounded: 1.0f - 0.999f would carry float's error of 0.999 (1e-5
  // relative of 0.001) into v and every step's size. HugeCTR computes 1.0f - beta2 in float; the
  // results differ by that rounding only.
  portable::AdamParams params_;
  std::uint64_t id_ = next_id();
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_adam(const config::Optimizer& options, std::int32_t dim) {
  return std::make_unique<Adam>(options, dim);
}

}  // namespace embscale::embedding::optimizers
