// ReduceSum ("axis"): sums over one axis, kept with size 1. A 2D bottom [batch x rows, width]
// takes axis 1 (its width): [batch x rows, 1]. A 3D bottom [batch, slots, width] takes axis 1
// (slots: [batch, 1, width]) or 2 (width: [batch, slots, 1]). Backward broadcasts the gradient.
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

// A sample is `outer` blocks of `count` x `inner` values; each block's `count` values at stride
// `inner` sum into one: the top's sample is outer x inner values.
template <typename T> class ReduceSum final : public DenseOp<T> {
 public:
  ReduceSum(SampleShape top, std::int64_t outer, std::int64_t count, std::int64_t inner)
      : top_(top), outer_(outer), count_(count), inner_(inner) {}
  std::vector<SampleShape> top_shapes() const override { return {top_}; }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    const T* x = bottoms[0]->value.data();
    T* y = tops[0]->value.data();
    for (std::int64_t o = 0; o < step.rows * outer_; ++o)
      for (std::int64_t i = 0; i < inner_; ++i) {
        T sum = T(0);
        for (std::int64_t c = 0; c < count_; ++c) sum += x[(o * count_ + c) * inner_ + i];
        y[o * inner_ + i] = sum;
      }
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    T* dx = bottoms[0]->grad.data();
    const T* dy = tops[0]->grad.data();
    for (std::int64_t o = 0; o < step.rows * outer_; ++o)
      for (std::int64_t c = 0; c < count_; ++c)
        for (std::int64_t i = 0; i < inner_; ++i) dx[(o * count_ + c) * inner_ + i] += dy[o * inner_ + i];
  }

 private:
  SampleShape top_;
  std::int64_t outer_, count_, inner_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_reduce_sum(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 1);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "axis"});
  const SampleShape& s = build.bottoms[0];
  const std::int64_t axis = r.integer("axis", config::IntRange::between(1, s.three_d ? 2 : 1));
  if (s.three_d && axis == 1) return std::make_unique<ReduceSum<T>>(SampleShape{1, s.width, true}, 1, s.rows, s.width);
  return std::make_unique<ReduceSum<T>>(SampleShape{s.rows, 1, s.three_d}, s.rows, s.width, 1);
}

template std::unique_ptr<DenseOp<float>> make_reduce_sum(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_reduce_sum(const LayerBuild<double>&);

}  // namespace embscale::model::layers
