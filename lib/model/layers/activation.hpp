// An element-wise activation layer: one bottom, one top of the same shape, y = f(x) per element,
// dx += f'(x, y) dy. ReLU, ELU and Sigmoid are this template with their functions (each its own
// file). Internal to lib/model.
#pragma once

#include <memory>

#include "model/layers/layer_support.hpp"

namespace embscale::model::layers {

// F: struct with `T value(T x) const` and `T derivative(T x, T y) const` (y = value(x)).
template <typename T, typename F> class Activation final : public DenseOp<T> {
 public:
  Activation(const LayerBuild<T>& build, F f) : shape_(build.bottoms.at(0)), f_(f) {}
  std::vector<SampleShape> top_shapes() const override { return {shape_}; }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo&) override {
    const std::vector<T>& x = bottoms[0]->value;
    std::vector<T>& y = tops[0]->value;
    for (std::size_t k = 0; k < x.size(); ++k) y[k] = f_.value(x[k]);
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops, const StepInfo&) override {
    const std::vector<T>& x = bottoms[0]->value;
    const std::vector<T>& y = tops[0]->value;
    const std::vector<T>& dy = tops[0]->grad;
    std::vector<T>& dx = bottoms[0]->grad;
    for (std::size_t k = 0; k < x.size(); ++k) dx[k] += f_.derivative(x[k], y[k]) * dy[k];
  }

 private:
  SampleShape shape_;
  F f_;
};

template <typename T, typename F> std::unique_ptr<DenseOp<T>> make_activation(const LayerBuild<T>& build, F f) {
  expect_tensors(build, 1, 1);
  return std::make_unique<Activation<T, F>>(build, f);
}

}  // namespace embscale::model::layers
