// BinaryCrossEntropyLoss: bottoms [logits [batch, 1], labels [batch, 1]]; the sigmoid is inside
// the loss, as HugeCTR's. Per sample, with x the logit and y its 0/1 label, computed stably:
//   loss = (log(1 + e^-|x|) + max(x, 0) - x y) / G,   dloss/dx = (sigmoid(x) - y) / G,
// G the global batch, so the ranks' sums add up to the batch's mean. Its top holds each sample's
// term. "regularizer" ("L1" or "L2", with "lambda") adds lambda |w| or lambda w^2 / 2 over every
// dense parameter, divided by G (HugeCTR's penalty with its batch the global one; DenseGraph adds it).
#include <cmath>

#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> T sigmoid(T x) {
  return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x));
}

template <typename T> class BinaryCrossEntropyLoss final : public LossOp<T> {
 public:
  BinaryCrossEntropyLoss(Regularizer regularizer, double lambda) : regularizer_(regularizer), lambda_(lambda) {}
  std::vector<SampleShape> top_shapes() const override { return {{1, 1, false}}; }
  Regularizer regularizer() const noexcept override { return regularizer_; }
  double lambda() const noexcept override { return lambda_; }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    const T scale = T(1) / static_cast<T>(step.global_rows);
    for (std::int64_t r = 0; r < step.rows; ++r) {
      const T x = bottoms[0]->value[static_cast<std::size_t>(r)];
      const T y = bottoms[1]->value[static_cast<std::size_t>(r)];
      tops[0]->value[static_cast<std::size_t>(r)] =
          (std::log1p(std::exp(-std::abs(x))) + (x > T(0) ? x : T(0)) - x * y) * scale;
    }
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const>, const StepInfo& step) override {
    const T scale = T(1) / static_cast<T>(step.global_rows);
    for (std::int64_t r = 0; r < step.rows; ++r) {
      const auto k = static_cast<std::size_t>(r);
      bottoms[0]->grad[k] += (sigmoid(bottoms[0]->value[k]) - bottoms[1]->value[k]) * scale;
    }
  }

 private:
  Regularizer regularizer_;
  double lambda_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_binary_cross_entropy_loss(const LayerBuild<T>& build) {
  expect_tensors(build, 2, 1);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "regularizer", "lambda"});
  for (std::size_t b = 0; b < 2; ++b)
    if (build.bottoms[b].elements() != 1)
      fail(build, std::string(b == 0 ? "its logits" : "its labels") + " (\"" + build.node.bottoms[b] +
                      "\") must be one value per sample [batch, 1], got " + build.bottoms[b].describe() +
                      (b == 1 ? " (several labels per sample need MultiCrossEntropyLoss, not built)" : ""));
  Regularizer regularizer = Regularizer::kNone;
  double lambda = 0.0;
  if (r.has("regularizer")) {
    regularizer = r.one_of("regularizer", {"L1", "L2"}) == "L1" ? Regularizer::kL1 : Regularizer::kL2;
    lambda = r.number("lambda", config::NumberRange{});
  } else if (r.has("lambda")) {
    fail(build, "\"lambda\" is the regularizer's weight; give \"regularizer\": \"L1\" or \"L2\" with it");
  }
  return std::make_unique<BinaryCrossEntropyLoss<T>>(regularizer, lambda);
}

template std::unique_ptr<DenseOp<float>> make_binary_cross_entropy_loss(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_binary_cross_entropy_loss(const LayerBuild<double>&);

}  // namespace embscale::model::layers
