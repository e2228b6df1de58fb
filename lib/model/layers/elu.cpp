// ELU (elu_param.alpha, default 1): y = x for x > 0, alpha (e^x - 1) otherwise; dy/dx = 1 or
// y + alpha.
#include <cmath>

#include "model/layers/activation.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> struct Elu {
  T alpha;
  T value(T x) const { return x > T(0) ? x : alpha * std::expm1(x); }
  T derivative(T x, T y) const { return x > T(0) ? T(1) : y + alpha; }
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_elu(const LayerBuild<T>& build) {
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "elu_param"});
  double alpha = 1.0;
  if (r.has("elu_param")) {
    const auto param = r.object("elu_param");
    param.only_keys({"alpha"});
    alpha = param.number_or("alpha", 1.0, config::NumberRange{});
  }
  return make_activation(build, Elu<T>{static_cast<T>(alpha)});
}

template std::unique_ptr<DenseOp<float>> make_elu(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_elu(const LayerBuild<double>&);

}  // namespace embscale::model::layers
