// InnerProduct (fc_param.num_output): y = x W + b over [rows, in] -> [rows, out], W in x out
// row-major; FusedInnerProduct is the same followed by ReLU (HugeCTR fuses bias and ReLU into
// one kernel; here the ReLU is a pass over y). Data-parallel: every rank the whole W and b
// (replicated), its own rows; partition_dim 1 is the feature-parallel layer
// (feature_parallel_inner_product.cpp). The products go through the BLAS:
//   forward   y = x W (+ b per row)                  gemm(rows, out, in)
//   backward  dW = x^T dy, db = column sums of dy    gemm(in, out, rows)
//             dx += dy W^T                           gemm(rows, in, out)
#include <algorithm>

#include "model/blas.hpp"
#include "model/layers/initializers.hpp"
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class InnerProduct final : public DenseOp<T> {
 public:
  InnerProduct(const LayerBuild<T>& build, std::int64_t outputs, bool relu)
      : store_(build.parameters), seed_(build.seed), in_(build.bottoms[0].width), out_(outputs),
        rows_per_sample_(build.bottoms[0].rows), relu_(relu),
        weights_(store_.declare(static_cast<std::size_t>(in_ * out_), ParameterSharing::kReplicated, true)),
        bias_(store_.declare(static_cast<std::size_t>(out_), ParameterSharing::kReplicated, true)) {}

  std::vector<SampleShape> top_shapes() const override { return {{rows_per_sample_, out_, false}}; }

  void initialize() override {
    const std::span<T> w = store_.values(weights_), b = store_.values(bias_);
    for (std::size_t k = 0; k < w.size(); ++k)
      w[k] = static_cast<T>(normal_value(seed_, ParameterStream::kWeight, k, fc_weight_stddev(in_, out_)));
    for (std::size_t k = 0; k < b.size(); ++k)
      b[k] = static_cast<T>(normal_value(seed_, ParameterStream::kBias, k, fc_bias_stddev(out_)));
  }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo&) override {
    const Blob<T>& x = *bottoms[0];
    Blob<T>& y = *tops[0];
    const std::int64_t m = static_cast<std::int64_t>(x.value.size()) / in_;
    const std::span<const T> b = store_.values(bias_);
    for (std::int64_t r = 0; r < m; ++r) std::copy(b.begin(), b.end(), y.value.begin() + r * out_);
    gemm<T>(Transpose::kNo, Transpose::kNo, m, out_, in_, T(1), x.value.data(), in_, store_.values(weights_).data(),
            out_, T(1), y.value.data(), out_);
    if (relu_)
      for (T& v : y.value) v = v > T(0) ? v : T(0);
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops, const StepInfo&) override {
    Blob<T>& x = *bottoms[0];
    const Blob<T>& y = *tops[0];
    const std::int64_t m = static_cast<std::int64_t>(x.value.size()) / in_;
    const T* dy = y.grad.data();
    if (relu_) {  // no gradient where ReLU clamped the output
      masked_.resize(y.grad.size());
      for (std::size_t k = 0; k < masked_.size(); ++k) masked_[k] = y.value[k] > T(0) ? y.grad[k] : T(0);
      dy = masked_.data();
    }
    gemm<T>(Transpose::kYes, Transpose::kNo, in_, out_, m, T(1), x.value.data(), in_, dy, out_, T(0),
            store_.grads(weights_).data(), out_);
    const std::span<T> db = store_.grads(bias_);
    std::fill(db.begin(), db.end(), T(0));
    for (std::int64_t r = 0; r < m; ++r)
      for (std::int64_t j = 0; j < out_; ++j) db[static_cast<std::size_t>(j)] += dy[r * out_ + j];
    gemm<T>(Transpose::kNo, Transpose::kYes, m, in_, out_, T(1), dy, out_, store_.values(weights_).data(), out_, T(1),
            x.grad.data(), in_);
  }

 private:
  ParameterStore<T>& store_;
  std::uint64_t seed_;
  std::int64_t in_, out_, rows_per_sample_;
  bool relu_;
  ParameterHandle weights_, bias_;
  std::vector<T> masked_;  // FusedInnerProduct's gradient through its ReLU
};

template <typename T> std::unique_ptr<DenseOp<T>> make_fully_connected(const LayerBuild<T>& build, bool relu) {
  expect_tensors(build, 1, 1);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "fc_param", "partition_dim"});
  const auto param = r.object("fc_param");
  param.only_keys({"num_output"});
  const std::int64_t outputs = param.integer("num_output", config::IntRange::between(1, 1 << 24));
  const auto partition = r.integer_or("partition_dim", 0, config::IntRange::between(0, 1));
  expect_2d(build, 0);
  if (partition == 1) return make_feature_parallel_inner_product(build, outputs, relu);
  return std::make_unique<InnerProduct<T>>(build, outputs, relu);
}

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_inner_product(const LayerBuild<T>& build) {
  return make_fully_connected(build, false);
}

template <typename T> std::unique_ptr<DenseOp<T>> make_fused_inner_product(const LayerBuild<T>& build) {
  return make_fully_connected(build, true);
}

template std::unique_ptr<DenseOp<float>> make_inner_product(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_inner_product(const LayerBuild<double>&);
template std::unique_ptr<DenseOp<float>> make_fused_inner_product(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_fused_inner_product(const LayerBuild<double>&);

}  // namespace embscale::model::layers
