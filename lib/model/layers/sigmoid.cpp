// Sigmoid: y = 1 / (1 + e^-x); dy/dx = y (1 - y).
#include <cmath>

#include "model/layers/activation.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> struct Sigmoid {
  T value(T x) const { return x >= T(0) ? T(1) / (T(1) + std::exp(-x)) : std::exp(x) / (T(1) + std::exp(x)); }
  T derivative(T, T y) const { return y * (T(1) - y); }
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_sigmoid(const LayerBuild<T>& build) {
  reader_of(build).only_keys({"name", "type", "bottom", "top"});
  return make_activation(build, Sigmoid<T>{});
}

template std::unique_ptr<DenseOp<float>> make_sigmoid(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_sigmoid(const LayerBuild<double>&);

}  // namespace embscale::model::layers
