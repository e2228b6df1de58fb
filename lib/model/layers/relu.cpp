// ReLU: y = max(0, x); its gradient passes where y > 0 (x = 0 passes none, as HugeCTR's).
#include "model/layers/activation.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> struct Relu {
  T value(T x) const { return x > T(0) ? x : T(0); }
  T derivative(T, T y) const { return y > T(0) ? T(1) : T(0); }
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_relu(const LayerBuild<T>& build) {
  reader_of(build).only_keys({"name", "type", "bottom", "top"});
  return make_activation(build, Relu<T>{});
}

template std::unique_ptr<DenseOp<float>> make_relu(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_relu(const LayerBuild<double>&);

}  // namespace embscale::model::layers
