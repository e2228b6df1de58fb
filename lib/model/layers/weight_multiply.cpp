// WeightMultiply (HugeCTR's samples call it "Multiply"; weight_dims [S, k]): each of a sample's
// S values scales its own learned row of k weights: [batch, S] -> [batch, S x k],
//   y[s k + t] = x_s W[s][t],   dW[s][t] = sum over rows of x_s dy[s k + t],   dx_s = sum_t dy W[s][t].
// W starts Xavier-uniform (fan_in S, fan_out S x k), as HugeCTR's default.
#include <cmath>

#include "model/layers/initializers.hpp"
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class WeightMultiply final : public DenseOp<T> {
 public:
  WeightMultiply(const LayerBuild<T>& build, std::int64_t slots, std::int64_t k)
      : store_(build.parameters), seed_(build.seed), slots_(slots), k_(k),
        weights_(store_.declare(static_cast<std::size_t>(slots * k), ParameterSharing::kReplicated, true)) {}
  std::vector<SampleShape> top_shapes() const override { return {{1, slots_ * k_, false}}; }
  void initialize() override {
    const double limit = std::sqrt(6.0 / static_cast<double>(slots_ + slots_ * k_));
    const std::span<T> w = store_.values(weights_);
    for (std::size_t i = 0; i < w.size(); ++i)
      w[i] = static_cast<T>(uniform_value(seed_, ParameterStream::kWeight, i, limit));
  }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    const std::span<const T> w = store_.values(weights_);
    for (std::int64_t r = 0; r < step.rows; ++r)
      for (std::int64_t s = 0; s < slots_; ++s) {
        const T x = bottoms[0]->value[static_cast<std::size_t>(r * slots_ + s)];
        for (std::int64_t t = 0; t < k_; ++t)
          tops[0]->value[static_cast<std::size_t>((r * slots_ + s) * k_ + t)] =
              x * w[static_cast<std::size_t>(s * k_ + t)];
      }
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    const std::span<const T> w = store_.values(weights_);
    const std::span<T> dw = store_.grads(weights_);
    std::fill(dw.begin(), dw.end(), T(0));
    for (std::int64_t r = 0; r < step.rows; ++r)
      for (std::int64_t s = 0; s < slots_; ++s) {
        const T x = bottoms[0]->value[static_cast<std::size_t>(r * slots_ + s)];
        T dx = T(0);
        for (std::int64_t t = 0; t < k_; ++t) {
          const T dy = tops[0]->grad[static_cast<std::size_t>((r * slots_ + s) * k_ + t)];
          dw[static_cast<std::size_t>(s * k_ + t)] += x * dy;
          dx += dy * w[static_cast<std::size_t>(s * k_ + t)];
        }
        bottoms[0]->grad[static_cast<std::size_t>(r * slots_ + s)] += dx;
      }
  }

 private:
  ParameterStore<T>& store_;
  std::uint64_t seed_;
  std::int64_t slots_, k_;
  ParameterHandle weights_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_weight_multiply(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 1);
  expect_one_row(build, 0);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "weight_dims"});
  constexpr auto expected = "[slots, k]: the bottom's width and each value's weights";
  const auto dims = r.required("weight_dims", expected).array(2, expected);
  if (dims.size() != 2) fail(build, std::string("weight_dims: expected ") + expected);
  const std::int64_t slots = dims[0].integer(config::IntRange::between(1, 1 << 24));
  const std::int64_t k = dims[1].integer(config::IntRange::between(1, 1 << 24));
  if (slots != build.bottoms[0].width)
    fail(build, "weight_dims[0] " + std::to_string(slots) + " must equal its bottom's width " +
                    std::to_string(build.bottoms[0].width) + " (\"" + build.node.bottoms[0] + "\")");
  return std::make_unique<WeightMultiply<T>>(build, slots, k);
}

template std::unique_ptr<DenseOp<float>> make_weight_multiply(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_weight_multiply(const LayerBuild<double>&);

}  // namespace embscale::model::layers
