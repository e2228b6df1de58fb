// Slice ("ranges": [[begin, end), ...], one top per range): each top holds every row's values
// [begin, end) of its bottom [batch x rows, width] (2D). Ranges may overlap or repeat (HugeCTR's
// way to read one tensor twice); backward sums each top's gradient into its range.
#include <algorithm>

#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

struct Range {
  std::int64_t begin = 0, end = 0;
};

template <typename T> class Slice final : public DenseOp<T> {
 public:
  Slice(SampleShape bottom, std::vector<Range> ranges) : bottom_(bottom), ranges_(std::move(ranges)) {}
  std::vector<SampleShape> top_shapes() const override {
    std::vector<SampleShape> shapes;
    for (const Range& r : ranges_) shapes.push_back({bottom_.rows, r.end - r.begin, false});
    return shapes;
  }
  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    const std::int64_t rows = step.rows * bottom_.rows, w = bottom_.width;
    for (std::size_t t = 0; t < ranges_.size(); ++t) {
      const Range r = ranges_[t];
      T* y = tops[t]->value.data();
      for (std::int64_t i = 0; i < rows; ++i)
        y = std::copy_n(bottoms[0]->value.data() + i * w + r.begin, r.end - r.begin, y);
    }
  }
  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    const std::int64_t rows = step.rows * bottom_.rows, w = bottom_.width;
    for (std::size_t t = 0; t < ranges_.size(); ++t) {
      const Range r = ranges_[t];
      const T* dy = tops[t]->grad.data();
      for (std::int64_t i = 0; i < rows; ++i) {
        T* dx = bottoms[0]->grad.data() + i * w + r.begin;
        for (std::int64_t e = 0; e < r.end - r.begin; ++e) dx[e] += *dy++;
      }
    }
  }

 private:
  SampleShape bottom_;
  std::vector<Range> ranges_;
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_slice(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 0);
  expect_2d(build, 0);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "ranges"});
  const std::int64_t width = build.bottoms[0].width;
  constexpr auto expected = "a list of [begin, end) ranges, one per top";
  const auto list = r.required("ranges", expected).array(1, expected);
  if (list.size() != build.node.tops.size())
    fail(build, "\"ranges\" has " + std::to_string(list.size()) + " ranges and \"top\" " +
                    std::to_string(build.node.tops.size()) + " names; expected one range per top");
  std::vector<Range> ranges;
  for (const auto& item : list) {
    const auto pair = item.array(2, "[begin, end)");
    if (pair.size() != 2) item.fail("[begin, end): two integers");
    const std::int64_t begin = pair[0].integer(config::IntRange::between(0, width - 1));
    const std::int64_t end = pair[1].integer(config::IntRange::between(begin + 1, width));
    ranges.push_back({begin, end});
  }
  return std::make_unique<Slice<T>>(build.bottoms[0], std::move(ranges));
}

template std::unique_ptr<DenseOp<float>> make_slice(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_slice(const LayerBuild<double>&);

}  // namespace embscale::model::layers
