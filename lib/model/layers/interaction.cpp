// Interaction (DLRM's dot interaction): bottoms [batch, d] (the bottom MLP's output) and
// [batch, S, d] (an embedding layer's output). Per sample, with v_0 the MLP's vector and v_1..v_S
// the embeddings (N = S + 1 vectors), the top is
//   [v_0 (d values), v_i . v_j for every 0 <= j < i < N in row-major lower-triangle order
//    ((1,0), (2,0), (2,1), (3,0), ...: pair (i, j) at d + i (i - 1) / 2 + j), one padding 0]
// of width d + N (N - 1) / 2 + 1 (DLRM on Criteo: 128 + 351 + 1 = 480), as HugeCTR's layer.
// Backward: dv_0 gets the copy's gradient; each pair's gradient g adds g v_j to dv_i and g v_i to
// dv_j.
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class Interaction final : public DenseOp<T> {
 public:
  Interaction(std::int64_t slots, std::int64_t d) : n_(slots + 1), d_(d), width_(d + (slots + 1) * slots / 2 + 1) {}
  std::vector<SampleShape> top_shapes() const override { return {{1, width_, false}}; }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    for (std::int64_t r = 0; r < step.rows; ++r) {
      T* y = tops[0]->value.data() + r * width_;
      const T* mlp = bottoms[0]->value.data() + r * d_;
      std::copy(mlp, mlp + d_, y);
      std::int64_t at = d_;
      for (std::int64_t i = 1; i < n_; ++i)
        for (std::int64_t j = 0; j < i; ++j) y[at++] = dot(vector(bottoms, r, i), vector(bottoms, r, j));
      y[at] = T(0);  // padding
    }
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    for (std::int64_t r = 0; r < step.rows; ++r) {
      const T* g = tops[0]->grad.data() + r * width_;
      T* dmlp = bottoms[0]->grad.data() + r * d_;
      for (std::int64_t e = 0; e < d_; ++e) dmlp[e] += g[e];
      std::int64_t at = d_;
      for (std::int64_t i = 1; i < n_; ++i)
        for (std::int64_t j = 0; j < i; ++j, ++at) {
          const T gij = g[at];
          const T *vi = vector(bottoms, r, i), *vj = vector(bottoms, r, j);
          T *dvi = gradient(bottoms, r, i), *dvj = gradient(bottoms, r, j);
          for (std::int64_t e = 0; e < d_; ++e) {
            dvi[e] += gij * vj[e];
            dvj[e] += gij * vi[e];
          }
        }
    }
  }

 private:
  // Vector v of sample r: 0 the MLP's, s >= 1 the embedding's slot s - 1.
  template <typename Blobs> const T* vector(Blobs bottoms, std::int64_t r, std::int64_t v) const {
    return v == 0 ? bottoms[0]->value.data() + r * d_ : bottoms[1]->value.data() + (r * (n_ - 1) + v - 1) * d_;
  }
  T* gradient(std::span<Blob<T>* const> bottoms, std::int64_t r, std::int64_t v) const {
    return v == 0 ? bottoms[0]->grad.data() + r * d_ : bottoms[1]->grad.data() + (r * (n_ - 1) + v - 1) * d_;
  }
  T dot(const T* a, const T* b) const {
    T sum = T(0);
    for (std::int64_t e = 0; e < d_; ++e) sum += a[e] * b[e];
    return sum;
  }

  std::int64_t n_, d_, width_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_interaction(const LayerBuild<T>& build) {
  expect_tensors(build, 2, 1);
  reader_of(build).only_keys({"name", "type", "bottom", "top"});
  expect_one_row(build, 0);
  const SampleShape& mlp = build.bottoms[0];
  const SampleShape& embeddings = build.bottoms[1];
  if (!embeddings.three_d)
    fail(build, "its second bottom is an embedding layer's output [batch, slots, d]; \"" + build.node.bottoms[1] +
                    "\" is " + embeddings.describe());
  if (embeddings.width != mlp.width)
    fail(build, "its bottoms' vectors must have one size: \"" + build.node.bottoms[0] + "\" is " + mlp.describe() +
                    ", \"" + build.node.bottoms[1] + "\" is " + embeddings.describe());
  return std::make_unique<Interaction<T>>(embeddings.rows, mlp.width);
}

template std::unique_ptr<DenseOp<float>> make_interaction(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_interaction(const LayerBuild<double>&);

}  // namespace embscale::model::layers
