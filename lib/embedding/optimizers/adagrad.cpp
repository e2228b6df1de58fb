// AdaGrad (HugeCTR) and row-wise AdaGrad (FBGEMM's EXACT_ROWWISE_ADAGRAD). The accumulators start
// at initial_accu_value.
//
// AdaGrad, HugeCTR's opt_adagrad_kernel (HugeCTR/src/optimizers/sparse_optimizer.cu), one
// accumulator per embedding value:
//   s += g^2;  w -= lr g / (sqrt(s) + eps)
// HugeCTR's Global AdaGrad runs the same kernel on the touched rows only (a zero gradient would not
// change a row anyway). HugeCTR fills the accumulators with cudaMemsetAsync(ptr,
// initial_accu_value, bytes), which sets bytes, not floats (only 0 comes out as written); embscale
// sets every accumulator to initial_accu_value, which is what the parameter means.
//
// Row-wise AdaGrad, FBGEMM's rowwise_adagrad update (fbgemm_gpu's embedding_backward_split
// template, weight_decay_mode NONE), one accumulator per row:
//   s += (sum_d g_d^2) / dim;  w -= lr g / (sqrt(s) + eps)
// "EXACT": the gradients of a key's occurrences are summed before the update, which the caller
// guarantees here.
#include <cmath>

#include "embedding/optimizers/optimizer_base.hpp"

namespace embscale::embedding::optimizers {
namespace {

// The accumulators' start and epsilon; a zero gradient leaves both the accumulator and the weight
// as they are, so Global is Local.
template <class Derived> class AdaGradFamily : public ZeroGradientGlobal<Derived> {
 public:
  static constexpr bool kZeroGradientMovesRow = false;

  AdaGradFamily(const config::Optimizer& options, std::int32_t state_width)
      : ZeroGradientGlobal<Derived>(options, state_width), initial_(static_cast<float>(options.initial_accu_value)),
        epsilon_(static_cast<float>(options.epsilon)) {}

  void init_state(std::span<float> state) const noexcept final { std::fill(state.begin(), state.end(), initial_); }
  portable::OptimizerRef portable_ref(std::int64_t step) const noexcept final {
    auto r = this->base_ref(Derived::kKind, step);
    r.epsilon = epsilon_;
    r.initial_accumulator = initial_;
    return r;
  }

 protected:
  float epsilon() const noexcept { return epsilon_; }

 private:
  float initial_;
  float epsilon_;
};

class AdaGrad final : public AdaGradFamily<AdaGrad> {
 public:
  static constexpr portable::OptimizerKind kKind = portable::OptimizerKind::kAdaGrad;
  AdaGrad(const config::Optimizer& options, std::int32_t dim) : AdaGradFamily(options, dim) {}

  template <class Gradient>
  void apply(std::span<float> row, std::span<float> accumulator, const Gradient& g, std::int64_t) const noexcept {
    portable::adagrad_row(row.data(), accumulator.data(), g, row.size(), learning_rate(), epsilon());
  }
};

class RowWiseAdaGrad final : public AdaGradFamily<RowWiseAdaGrad> {
 public:
  static constexpr portable::OptimizerKind kKind = portable::OptimizerKind::kRowWiseAdaGrad;
  explicit RowWiseAdaGrad(const config::Optimizer& options) : AdaGradFamily(options, 1) {}

  template <class Gradient>
  void apply(std::span<float> row, std::span<float> accumulator, const Gradient& g, std::int64_t) const noexcept {
    portable::rowwise_adagrad_row(row.data(), accumulator.data(), g, row.size(), learning_rate(), epsilon());
  }
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_adagrad(const config::Optimizer& options, std::int32_t dim) {
  return std::make_unique<AdaGrad>(options, dim);
}

std::unique_ptr<SparseOptimizer> make_rowwise_adagrad(const config::Optimizer& options) {
  return std::make_unique<RowWiseAdaGrad>(options);
}

}  // namespace embscale::embedding::optimizers
