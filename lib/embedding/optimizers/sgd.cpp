// SGD, as HugeCTR's opt_sgd_kernel (HugeCTR/src/optimizers/sparse_optimizer.cu):
//   w -= lr(step) g
// lr(step): the learning rate under sgd_hparam's schedule (config::Optimizer::learning_rate_at,
// HugeCTR's LearningRateScheduler), the same on the host and in a device's OptimizerRef.
// No state. HugeCTR's Global SGD runs the same kernel (an untouched row does not move), and its
// atomic_update applies each occurrence's gradient with atomicAdd instead of their sum: the same
// update up to the order of the float additions, so the flag changes nothing here.
#include "embedding/optimizers/optimizer_base.hpp"

namespace embscale::embedding::optimizers {
namespace {

class Sgd final : public ZeroGradientGlobal<Sgd> {
 public:
  static constexpr bool kZeroGradientMovesRow = false;

  explicit Sgd(const config::Optimizer& options) : ZeroGradientGlobal(options, 0), options_(options) {}

  template <class Gradient>
  void apply(std::span<float> row, std::span<float>, const Gradient& g, std::int64_t step) const noexcept {
    portable::sgd_row(row.data(), g, row.size(), rate(step));
  }
  portable::OptimizerRef portable_ref(std::int64_t step) const noexcept override {
    auto ref = base_ref(portable::OptimizerKind::kSgd, step);
    ref.lr = rate(step);
    return ref;
  }

 private:
  float rate(std::int64_t step) const noexcept { return static_cast<float>(options_.learning_rate_at(step)); }

  config::Optimizer options_;
};

}  // namespace

std::unique_ptr<SparseOptimizer> make_sgd(const config::Optimizer& options) { return std::make_unique<Sgd>(options); }

}  // namespace embscale::embedding::optimizers
