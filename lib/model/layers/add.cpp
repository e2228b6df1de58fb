// Add: the element-wise sum of its bottoms (all of one shape); each bottom's gradient is the
// top's.
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class Add final : public DenseOp<T> {
 public:
  explicit Add(SampleShape shape) : shape_(shape) {}
  std::vector<SampleShape> top_shapes() const override { return {shape_}; }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo&) override {
    std::vector<T>& y = tops[0]->value;
    std::copy(bottoms[0]->value.begin(), bottoms[0]->value.end(), y.begin());
    for (std::size_t b = 1; b < bottoms.size(); ++b)
      for (std::size_t k = 0; k < y.size(); ++k) y[k] += bottoms[b]->value[k];
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops, const StepInfo&) override {
    const std::vector<T>& dy = tops[0]->grad;
    for (Blob<T>* x : bottoms)
      for (std::size_t k = 0; k < dy.size(); ++k) x->grad[k] += dy[k];
  }

 private:
  SampleShape shape_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_add(const LayerBuild<T>& build) {
  expect_tensors(build, 0, 1);
  reader_of(build).only_keys({"name", "type", "bottom", "top"});
  expect_same_shapes(build);
  return std::make_unique<Add<T>>(build.bottoms[0]);
}

template std::unique_ptr<DenseOp<float>> make_add(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_add(const LayerBuild<double>&);

}  // namespace embscale::model::layers
