// DenseLayer: HugeCTR's InnerProduct followed by ReLU, y = max(0, x W + b), partitioned as in
// SINGA's hybrid parallelism (partition_dim per layer), trained by plain SGD.
//   data-parallel (kData):      each rank its rows of x, the whole W and b; backward allreduces
//                               dW and db (sums over ranks), so every rank's copy stays equal;
//   feature-parallel (kFeature): each rank its columns of W and b (its share of the outputs), the
//                               whole x (a Split -> Concate connection gives it); its output is
//                               its columns of y, and the gradient of x it returns is its copy's
//                               share, which the connection's backward sums over ranks.
// W is `inputs` x `outputs`, row-major; element (i, j) starts at a pure function of (seed, i, j),
// so every partitioning starts from the same matrix.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "model/connections.hpp"

namespace embscale::model {

// The initial W[i][j] (Glorot-uniform bound for `inputs` x `outputs`) and b[j] (0).
float initial_weight(std::uint64_t seed, std::int64_t i, std::int64_t j, std::int64_t inputs, std::int64_t outputs);

class DenseLayer {
 public:
  DenseLayer(comm::Communicator& comm, std::int64_t inputs, std::int64_t outputs, PartitionDim partition,
             std::uint64_t seed, float learning_rate);

  // `input`: kData: this rank's rows x inputs; kFeature: all rows x inputs. Returns this rank's
  // output part: kData its rows x outputs; kFeature all rows x its outputs.
  std::vector<float> forward(std::span<const float> input, std::int64_t rows);
  // The gradient of forward's output part -> the gradient of its input (kFeature: this rank's
  // copy's share). Updates W and b (kData: after the allreduce of their gradients). Collective
  // for kData.
  std::vector<float> backward(std::span<const float> output_grad);

  // This rank's W columns [first_output, first_output + outputs_here) and b, row-major.
  std::span<const float> weights() const noexcept { return weights_; }
  std::span<const float> bias() const noexcept { return bias_; }
  std::int64_t first_output() const noexcept { return first_output_; }
  std::int64_t outputs_here() const noexcept { return outputs_here_; }

 private:
  comm::Communicator& comm_;
  std::int64_t inputs_, outputs_;
  PartitionDim partition_;
  float learning_rate_;
  std::int64_t first_output_ = 0, outputs_here_ = 0;
  std::vector<float> weights_, bias_;
  std::vector<float> input_, output_;  // forward's, kept for backward
  std::int64_t rows_ = 0;
};

}  // namespace embscale::model
