#include "model/dense_layer.hpp"

#include <algorithm>
#include <cmath>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::model {

float initial_weight(std::uint64_t seed, std::int64_t i, std::int64_t j, std::int64_t inputs, std::int64_t outputs) {
  const std::uint64_t h =
      hash_combine(hash_combine(seed, static_cast<std::uint64_t>(i)), static_cast<std::uint64_t>(j));
  const double unit = static_cast<double>(h >> 11) * 0x1.0p-53;  // [0, 1)
  const double bound = std::sqrt(6.0 / static_cast<double>(inputs + outputs));
  return static_cast<float>((2.0 * unit - 1.0) * bound);
}

DenseLayer::DenseLayer(comm::Communicator& comm, std::int64_t inputs, std::int64_t outputs, PartitionDim partition,
                       std::uint64_t seed, float learning_rate)
    : comm_(comm), inputs_(inputs), outputs_(outputs), partition_(partition), learning_rate_(learning_rate) {
  EMBSCALE_EXPECTS(inputs >= 1 && outputs >= 1, "a dense layer needs inputs and outputs");
  const SampleShare share = partition == PartitionDim::kFeature ? sample_share_of(outputs, comm.rank(), comm.size())
                                                                : SampleShare{0, outputs};
  first_output_ = share.first;
  outputs_here_ = share.count;
  for (std::int64_t i = 0; i < inputs_; ++i)
    for (std::int64_t j = first_output_; j < first_output_ + outputs_here_; ++j)
      weights_.push_back(initial_weight(seed, i, j, inputs_, outputs_));
  bias_.assign(static_cast<std::size_t>(outputs_here_), 0.0f);
}

std::vector<float> DenseLayer::forward(std::span<const float> input, std::int64_t rows) {
  const auto in = static_cast<std::size_t>(inputs_), out = static_cast<std::size_t>(outputs_here_);
  if (input.size() != static_cast<std::size_t>(rows) * in)
    throw Error("dense layer: its input holds " + std::to_string(input.size()) + " values, expected " +
                std::to_string(rows) + " rows x " + std::to_string(inputs_) + " inputs");
  rows_ = rows;
  input_.assign(input.begin(), input.end());
  output_.assign(static_cast<std::size_t>(rows) * out, 0.0f);
  for (std::size_t r = 0; r < static_cast<std::size_t>(rows); ++r) {
    float* y = output_.data() + r * out;
    std::copy(bias_.begin(), bias_.end(), y);
    for (std::size_t i = 0; i < in; ++i) {
      const float x = input_[r * in + i];
      const float* w = weights_.data() + i * out;
      for (std::size_t j = 0; j < out; ++j) y[j] += x * w[j];
    }
    for (std::size_t j = 0; j < out; ++j) y[j] = std::max(y[j], 0.0f);  // ReLU
  }
  return output_;
}

std::vector<float> DenseLayer::backward(std::span<const float> output_grad) {
  const auto in = static_cast<std::size_t>(inputs_), out = static_cast<std::size_t>(outputs_here_);
  const auto rows = static_cast<std::size_t>(rows_);
  EMBSCALE_EXPECTS(output_grad.size() == rows * out, "the output's gradient has forward's output shape");
  // Through ReLU: no gradient where the output was clamped to 0.
  std::vector<float> dy(output_grad.begin(), output_grad.end());
  for (std::size_t k = 0; k < dy.size(); ++k)
    if (output_[k] <= 0.0f) dy[k] = 0.0f;
  std::vector<float> dx(rows * in, 0.0f), dw(in * out, 0.0f), db(out, 0.0f);
  for (std::size_t r = 0; r < rows; ++r) {
    const float* g = dy.data() + r * out;
    for (std::size_t j = 0; j < out; ++j) db[j] += g[j];
    for (std::size_t i = 0; i < in; ++i) {
      const float x = input_[r * in + i];
      const float* w = weights_.data() + i * out;
      float* dwi = dw.data() + i * out;
      float sum = 0.0f;
      for (std::size_t j = 0; j < out; ++j) {
        dwi[j] += x * g[j];
        sum += w[j] * g[j];
      }
      dx[r * in + i] = sum;
    }
  }
  if (partition_ == PartitionDim::kData) {  // each rank saw its rows only: the gradients are sums over ranks
    comm_.allreduce(std::span<const float>(dw), std::span<float>(dw), comm::ReduceOp::kSum);
    comm_.allreduce(std::span<const float>(db), std::span<float>(db), comm::ReduceOp::kSum);
  }
  for (std::size_t k = 0; k < weights_.size(); ++k) weights_[k] -= learning_rate_ * dw[k];
  for (std::size_t j = 0; j < out; ++j) bias_[j] -= learning_rate_ * db[j];
  return dx;
}

}  // namespace embscale::model
