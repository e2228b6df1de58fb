// MomentumSGD and Nesterov, as HugeCTR's kernels in HugeCTR/src/optimizers/sparse_optimizer.cu.
// One state value per embedding value (the momentum a), starting at 0.
//
// MomentumSGD (opt_momentum_sgd_kernel), f = momentum_factor:
//   a = f a - lr g;  w += a
// Nesterov (opt_nesterov_kernel), mu = momentum_factor:
//   a' = mu a - lr g;  w += -mu a + (1 + mu) a'     (that is, w += mu^2 a - (1 + mu) lr g)
//
// Global: HugeCTR splits each into two kernels. MomentumSGD (opt_momentum_sgd_kernel_global, then
// momentum_sgd_update_kernel_global over every row): touched rows a -= lr g / f, then every row
// a *= f, w += a. Nesterov (nesterov_global_update_kernel_global, then
// nesterov_local_update_kernel_global): every row a *= mu, w += mu a, then touched rows a -= lr g,
// w -= (1 + mu) lr g. Both equal the formulas above for a touched row, and the formulas with g = 0
// for an untouched one, which is how they are computed here (without HugeCTR's division by f, which
// fails for f = 0).
#include "embedding/optimizers/optimizer_base.hpp"

namespace embscale::embedding::optimizers {
namespace {

class MomentumSgd final : public ZeroGradientGlobal<MomentumSgd> {
 public:
  static constexpr bool kZeroGradientMovesRow = true;

  MomentumSgd(const config::Optimizer& options, std::int32_t dim)
      : ZeroGradientGlobal(options, dim), factor_(static_cast<float>(options.momentum_factor)) {}

  template <class Gradient>
  void apply(std::span<float> row, std::span<float> momentum, const Gradient& g, std::int64_t) const noexcept {
    portable::momentum_row(row.data(), momentum.data(), g, row.size(), learning_rate(), factor_);
  }
  portable::OptimizerRef portable_ref(std::int64_t step) const noexcept override {
    auto r = base_ref(portable::OptimizerKind::kMomentum, step);
    r.factor = factor_;
    return r;
  }

 private:
  float factor_;
};

class Nesterov final : public ZeroGradientGlobal<Nesterov> {
 public:
  static constexpr bool kZeroGradientMovesRow = true;

  Nesterov(const config::Optimizer& options, std::int32_t dim)
      : ZeroGradientGlobal(options, dim), mu_(static_cast<float>(options.momentum_factor)) {}

  template <class Gradient>
  void apply(std::span<float> row, std::span<float> momentum, const Gradient& g, std::int64_t) const noexcept {
    portable::nesterov_row(row.data(), momentum.data(), g, row.size(), learning_rate(), mu_);
  }
  portable::OptimizerRef portable_ref(std::int64_t step) const noexcept override {
    auto r = base_ref(portable::OptimizerKind::kNesterov, step);
    r.factor = mu_;
    return r;
  }

 private:
  float mu_;
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_momentum_sgd(const config::Optimizer& options, std::int32_t dim) {
  return std::make_unique<MomentumSgd>(options, dim);
}

std::unique_ptr<SparseOptimizer> make_nesterov(const config::Optimizer& options, std::int32_t dim) {
  return std::make_unique<Nesterov>(options, dim);
}

}  // namespace embscale::embedding::optimizers
