// Concat: its bottoms side by side. 2D bottoms ([batch x rows, width_k], the same rows) join
// their widths: [batch x rows, sum of widths]. 3D bottoms ([batch, slots_k, width_k]) join on
// "axis" 1 (default: slots, the same width: [batch, sum of slots, width]) or 2 (widths, the same
// slots: [batch, slots, sum of widths]). Backward hands each bottom its part of the gradient.
#include <algorithm>

#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

// A sample of each bottom is `runs` runs of `run` values; the top's sample is the bottoms' runs
// interleaved: run 0 of every bottom, then run 1 of every bottom, ...
template <typename T> class Concat final : public DenseOp<T> {
 public:
  Concat(SampleShape top, std::int64_t runs, std::vector<std::int64_t> run)
      : top_(top), runs_(runs), run_(std::move(run)) {}
  std::vector<SampleShape> top_shapes() const override { return {top_}; }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    T* y = tops[0]->value.data();
    for (std::int64_t u = 0; u < step.rows * runs_; ++u)
      for (std::size_t k = 0; k < bottoms.size(); ++k) {
        const T* x = bottoms[k]->value.data() + u * run_[k];
        y = std::copy(x, x + run_[k], y);
      }
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    const T* dy = tops[0]->grad.data();
    for (std::int64_t u = 0; u < step.rows * runs_; ++u)
      for (std::size_t k = 0; k < bottoms.size(); ++k) {
        T* dx = bottoms[k]->grad.data() + u * run_[k];
        for (std::int64_t e = 0; e < run_[k]; ++e) dx[e] += *dy++;
      }
  }

 private:
  SampleShape top_;
  std::int64_t runs_;
  std::vector<std::int64_t> run_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_concat(const LayerBuild<T>& build) {
  expect_tensors(build, 0, 1);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "axis"});
  const auto& first = build.bottoms[0];
  const auto mismatch = [&](std::size_t k, const std::string& what) {
    fail(build, "its bottoms must agree in " + what + ": \"" + build.node.bottoms[0] + "\" is " + first.describe() +
                    ", \"" + build.node.bottoms[k] + "\" is " + build.bottoms[k].describe());
  };
  std::vector<std::int64_t> run;
  SampleShape top = first;
  std::int64_t runs = first.rows;
  const std::int64_t axis = first.three_d ? r.integer_or("axis", 1, config::IntRange::between(1, 2)) : 1;
  if (!first.three_d && r.has("axis")) (void)r.integer("axis", config::IntRange::between(1, 1));
  const bool join_slots = first.three_d && axis == 1;
  if (join_slots) {
    top.rows = 0;
    runs = 1;
  } else {
    top.width = 0;
  }
  for (std::size_t k = 0; k < build.bottoms.size(); ++k) {
    const SampleShape& s = build.bottoms[k];
    if (s.three_d != first.three_d) mismatch(k, "dimensions (all 2D or all 3D)");
    if (join_slots) {
      if (s.width != first.width) mismatch(k, "width (axis 1 joins slots)");
      top.rows += s.rows;
      run.push_back(s.elements());
    } else {
      if (s.rows != first.rows) mismatch(k, first.three_d ? "slots (axis 2 joins widths)" : "rows per sample");
      top.width += s.width;
      run.push_back(s.width);
    }
  }
  return std::make_unique<Concat<T>>(top, runs, std::move(run));
}

template std::unique_ptr<DenseOp<float>> make_concat(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_concat(const LayerBuild<double>&);

}  // namespace embscale::model::layers
