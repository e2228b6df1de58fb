// MultiCross (DCN's cross network; mc_param.num_layers L): on a bottom [batch, d],
//   x_0 = x,  x_{i+1} = x_0 (x_i . w_i) + x_i + b_i  (i < L),  top = x_L,
// w_i and b_i of d values each (w Xavier-uniform with fan_in = fan_out = d, b 0: HugeCTR's
// defaults). Backward from g = dx_L, for i = L - 1 .. 0, with s_i = x_i . w_i:
//   db_i += g,  dw_i += (g . x_0) x_i,  dx_0 += g s_i,  g <- g + (g . x_0) w_i;
// the bottom's gradient is the dx_0 terms plus the last g.
#include <cmath>

#include "model/layers/initializers.hpp"
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class MultiCross final : public DenseOp<T> {
 public:
  MultiCross(const LayerBuild<T>& build, std::int64_t layers)
      : store_(build.parameters), seed_(build.seed), d_(build.bottoms[0].width), layers_(layers) {
    for (std::int64_t i = 0; i < layers; ++i) {
      weights_.push_back(store_.declare(static_cast<std::size_t>(d_), ParameterSharing::kReplicated, true));
      bias_.push_back(store_.declare(static_cast<std::size_t>(d_), ParameterSharing::kReplicated, true));
    }
  }
  std::vector<SampleShape> top_shapes() const override { return {{1, d_, false}}; }
  void initialize() override {
    const double limit = std::sqrt(3.0 / static_cast<double>(d_));
    for (std::int64_t i = 0; i < layers_; ++i) {
      const std::span<T> w = store_.values(weights_[static_cast<std::size_t>(i)]);
      for (std::int64_t e = 0; e < d_; ++e)
        w[static_cast<std::size_t>(e)] = static_cast<T>(
            uniform_value(seed_, ParameterStream::kWeight, static_cast<std::uint64_t>(i * d_ + e), limit));
      const std::span<T> b = store_.values(bias_[static_cast<std::size_t>(i)]);
      std::fill(b.begin(), b.end(), T(0));
    }
  }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    const std::size_t n = static_cast<std::size_t>(step.rows * d_);
    xs_.resize(static_cast<std::size_t>(layers_));  // x_0 .. x_{L-1}: the layers' inputs
    scalars_.resize(static_cast<std::size_t>(layers_ * step.rows));
    const std::vector<T>& x0 = bottoms[0]->value;
    for (std::int64_t i = 0; i < layers_; ++i) {
      const std::vector<T>& xi = i == 0 ? x0 : xs_[static_cast<std::size_t>(i)];
      std::vector<T>& next = i + 1 < layers_ ? xs_[static_cast<std::size_t>(i + 1)] : tops[0]->value;
      next.resize(n);
      const std::span<const T> w = store_.values(weights_[static_cast<std::size_t>(i)]);
      const std::span<const T> b = store_.values(bias_[static_cast<std::size_t>(i)]);
      for (std::int64_t r = 0; r < step.rows; ++r) {
        const T* x = xi.data() + r * d_;
        T s = T(0);
        for (std::int64_t e = 0; e < d_; ++e) s += x[e] * w[static_cast<std::size_t>(e)];
        scalars_[static_cast<std::size_t>(i * step.rows + r)] = s;
        for (std::int64_t e = 0; e < d_; ++e)
          next[static_cast<std::size_t>(r * d_ + e)] =
              x0[static_cast<std::size_t>(r * d_ + e)] * s + x[e] + b[static_cast<std::size_t>(e)];
      }
    }
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    const std::vector<T>& x0 = bottoms[0]->value;
    g_.assign(tops[0]->grad.begin(), tops[0]->grad.end());
    dx0_.assign(g_.size(), T(0));
    for (std::int64_t i = layers_; i-- > 0;) {
      const std::vector<T>& xi = i == 0 ? x0 : xs_[static_cast<std::size_t>(i)];
      const std::span<const T> w = store_.values(weights_[static_cast<std::size_t>(i)]);
      const std::span<T> dw = store_.grads(weights_[static_cast<std::size_t>(i)]);
      const std::span<T> db = store_.grads(bias_[static_cast<std::size_t>(i)]);
      std::fill(dw.begin(), dw.end(), T(0));
      std::fill(db.begin(), db.end(), T(0));
      for (std::int64_t r = 0; r < step.rows; ++r) {
        T* g = g_.data() + r * d_;
        const T* x = x0.data() + r * d_;
        const T* xr = xi.data() + r * d_;
        const T s = scalars_[static_cast<std::size_t>(i * step.rows + r)];
        T gx0 = T(0);
        for (std::int64_t e = 0; e < d_; ++e) gx0 += g[e] * x[e];
        for (std::int64_t e = 0; e < d_; ++e) {
          const auto k = static_cast<std::size_t>(e);
          db[k] += g[e];
          dw[k] += gx0 * xr[e];
          dx0_[static_cast<std::size_t>(r * d_ + e)] += g[e] * s;
          g[e] += gx0 * w[k];
        }
      }
    }
    std::vector<T>& dx = bottoms[0]->grad;
    for (std::size_t k = 0; k < dx.size(); ++k) dx[k] += dx0_[k] + g_[k];
  }

 private:
  ParameterStore<T>& store_;
  std::uint64_t seed_;
  std::int64_t d_, layers_;
  std::vector<ParameterHandle> weights_, bias_;
  std::vector<std::vector<T>> xs_;  // forward's x_i, i >= 1 (x_0 is the bottom)
  std::vector<T> scalars_;          // s_i per row
  std::vector<T> g_, dx0_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_multi_cross(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 1);
  expect_one_row(build, 0);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "mc_param"});
  const auto param = r.object("mc_param");
  param.only_keys({"num_layers"});
  return std::make_unique<MultiCross<T>>(build, param.integer("num_layers", config::IntRange::between(1, 1024)));
}

template std::unique_ptr<DenseOp<float>> make_multi_cross(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_multi_cross(const LayerBuild<double>&);

}  // namespace embscale::model::layers
