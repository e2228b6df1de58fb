// FmOrder2 (out_dim k): the factorization machine's second-order term. Its bottom [batch, S x k]
// holds S vectors of k values (slot-major); per sample and value j,
//   y_j = 0.5 ((sum_s v_sj)^2 - sum_s v_sj^2),   dv_sj = dy_j (sum_s' v_s'j - v_sj).
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class FmOrder2 final : public DenseOp<T> {
 public:
  FmOrder2(std::int64_t slots, std::int64_t k) : slots_(slots), k_(k) {}
  std::vector<SampleShape> top_shapes() const override { return {{1, k_, false}}; }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    for (std::int64_t r = 0; r < step.rows; ++r) {
      const T* v = bottoms[0]->value.data() + r * slots_ * k_;
      for (std::int64_t j = 0; j < k_; ++j) {
        T sum = T(0), squares = T(0);
        for (std::int64_t s = 0; s < slots_; ++s) {
          sum += v[s * k_ + j];
          squares += v[s * k_ + j] * v[s * k_ + j];
        }
        tops[0]->value[static_cast<std::size_t>(r * k_ + j)] = T(0.5) * (sum * sum - squares);
      }
    }
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    for (std::int64_t r = 0; r < step.rows; ++r) {
      const T* v = bottoms[0]->value.data() + r * slots_ * k_;
      T* dv = bottoms[0]->grad.data() + r * slots_ * k_;
      for (std::int64_t j = 0; j < k_; ++j) {
        T sum = T(0);
        for (std::int64_t s = 0; s < slots_; ++s) sum += v[s * k_ + j];
        const T dy = tops[0]->grad[static_cast<std::size_t>(r * k_ + j)];
        for (std::int64_t s = 0; s < slots_; ++s) dv[s * k_ + j] += dy * (sum - v[s * k_ + j]);
      }
    }
  }

 private:
  std::int64_t slots_, k_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_fm_order2(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 1);
  expect_one_row(build, 0);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "out_dim"});
  const std::int64_t width = build.bottoms[0].width;
  const std::int64_t k = r.integer("out_dim", config::IntRange::between(1, width));
  if (width % k != 0)
    fail(build, "out_dim " + std::to_string(k) + " must divide its bottom's width " + std::to_string(width) +
                    " (slots x out_dim values)");
  return std::make_unique<FmOrder2<T>>(width / k, k);
}

template std::unique_ptr<DenseOp<float>> make_fm_order2(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_fm_order2(const LayerBuild<double>&);

}  // namespace embscale::model::layers
