// Reshape (leading_dim): a sample's values, unchanged in order, as rows of leading_dim values:
// [batch, slots, width] or [batch x rows, width] -> [batch x (values / leading_dim), leading_dim].
// leading_dim must divide a sample's values, so no row spans two samples (HugeCTR allows a
// leading_dim that joins samples; embscale's tensors stay split by samples, and no sample config
// needs it). Without leading_dim: one row per sample. Forward and backward are copies.
#include <algorithm>

#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class Reshape final : public DenseOp<T> {
 public:
  explicit Reshape(SampleShape top) : top_(top) {}
  std::vector<SampleShape> top_shapes() const override { return {top_}; }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo&) override {
    std::copy(bottoms[0]->value.begin(), bottoms[0]->value.end(), tops[0]->value.begin());
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops, const StepInfo&) override {
    std::vector<T>& dx = bottoms[0]->grad;
    const std::vector<T>& dy = tops[0]->grad;
    for (std::size_t k = 0; k < dx.size(); ++k) dx[k] += dy[k];
  }

 private:
  SampleShape top_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_reshape(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 1);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "leading_dim"});
  const std::int64_t values = build.bottoms[0].elements();
  const std::int64_t leading = r.integer_or("leading_dim", values, config::IntRange::at_least(1));
  if (values % leading != 0)
    fail(build, "leading_dim " + std::to_string(leading) + " must divide a sample's " + std::to_string(values) +
                    " values (its bottom \"" + build.node.bottoms[0] + "\" is " + build.bottoms[0].describe() +
                    "); rows that join samples are not supported");
  return std::make_unique<Reshape<T>>(SampleShape{values / leading, leading, false});
}

template std::unique_ptr<DenseOp<float>> make_reshape(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_reshape(const LayerBuild<double>&);

}  // namespace embscale::model::layers
