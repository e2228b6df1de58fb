// Dropout ("rate", HugeCTR's samples; "dropout_rate", its later parser; default 0.5, in (0, 1)):
// inverted dropout, as HugeCTR's: in training each element is kept with probability 1 - rate and
// scaled by 1 / (1 - rate), else 0; in evaluation the layer passes its input through. The mask is
// a pure function of (the layer's seed, the step, the sample's global index, the element), so a
// sample meets the same mask on any number of ranks: element e of a sample draws the 32-bit word
// e % 4 of Philox block e / 4 of the sample's blocks, dropped when below rate x 2^32 (one block
// per four elements: the draws were a fifth of a DCN step when each took its own).
#include <algorithm>

#include "core/rng.hpp"
#include "model/layers/layer_support.hpp"
#include "model/layers/layers.hpp"

namespace embscale::model::layers {
namespace {

template <typename T> class Dropout final : public DenseOp<T> {
 public:
  Dropout(const LayerBuild<T>& build, double rate) : shape_(build.bottoms[0]), seed_(build.seed), rate_(rate) {}
  std::vector<SampleShape> top_shapes() const override { return {shape_}; }

  void forward(std::span<const Blob<T>* const> bottoms, std::span<Blob<T>* const> tops, const StepInfo& step) override {
    const std::vector<T>& x = bottoms[0]->value;
    std::vector<T>& y = tops[0]->value;
    if (!step.training) {
      std::copy(x.begin(), x.end(), y.begin());
      return;
    }
    const std::int64_t n = shape_.elements();
    const std::int64_t blocks = (n + 3) / 4;  // per sample
    const CounterRng rng(seed_, static_cast<std::uint64_t>(step.step));
    const T scale = static_cast<T>(1.0 / (1.0 - rate_));
    const auto threshold = static_cast<std::uint64_t>(rate_ * 0x1.0p32);  // drop: word < threshold
    scale_.resize(x.size());
    for (std::int64_t r = 0; r < step.rows; ++r) {
      const auto first_block = static_cast<std::uint64_t>(step.first_row + r) * static_cast<std::uint64_t>(blocks);
      for (std::int64_t b = 0; b < blocks; ++b) {
        const auto words = rng.block(first_block + static_cast<std::uint64_t>(b));
        for (std::int64_t e = 4 * b; e < std::min(n, 4 * b + 4); ++e) {
          const auto k = static_cast<std::size_t>(r * n + e);
          scale_[k] = words[static_cast<std::size_t>(e - 4 * b)] < threshold ? T(0) : scale;
          y[k] = x[k] * scale_[k];
        }
      }
    }
  }

  void backward(std::span<Blob<T>* const> bottoms, std::span<const Blob<T>* const> tops,
                const StepInfo& step) override {
    const std::vector<T>& dy = tops[0]->grad;
    std::vector<T>& dx = bottoms[0]->grad;
    for (std::size_t k = 0; k < dx.size(); ++k) dx[k] += step.training ? dy[k] * scale_[k] : dy[k];
  }

 private:
  SampleShape shape_;
  std::uint64_t seed_;
  double rate_;
  std::vector<T> scale_;  // forward's mask times 1 / (1 - rate)
};

}  // namespace

template <typename T> std::unique_ptr<DenseOp<T>> make_dropout(const LayerBuild<T>& build) {
  expect_tensors(build, 1, 1);
  const auto r = reader_of(build);
  r.only_keys({"name", "type", "bottom", "top", "rate", "dropout_rate"});
  if (r.has("rate") && r.has("dropout_rate")) fail(build, "give \"rate\" or \"dropout_rate\", not both");
  const auto range = config::NumberRange{0.0, 1.0, true, true};  // (0, 1)
  const double rate = r.has("rate") ? r.number("rate", range) : r.number_or("dropout_rate", 0.5, range);
  return std::make_unique<Dropout<T>>(build, rate);
}

template std::unique_ptr<DenseOp<float>> make_dropout(const LayerBuild<float>&);
template std::unique_ptr<DenseOp<double>> make_dropout(const LayerBuild<double>&);

}  // namespace embscale::model::layers
