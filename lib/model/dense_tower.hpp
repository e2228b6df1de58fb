// DenseTower: the dense layers after an embedding layer (SINGA's hybrid parallelism on this
// model): a chain of DenseLayers, each data- or feature-parallel as its partition_dim says, with
// the connection the hybrid-parallel connection table names wherever two partitionings meet (connections.hpp):
//
//   embedding output (data-parallel: this rank's samples x inputs)
//     -> connection (OneToAll: an InnerProduct reads every feature) -> DenseLayer 0
//     -> connection (OneToAll) -> DenseLayer 1 -> ... -> DenseLayer n-1
//     -> connection back to data-parallel (OneToOne) -> this rank's samples x outputs
//
// so the objective after it reads this rank's samples, as the embedding's does. Backward runs the
// chain in reverse: each connection's backward, each layer's SGD update (a data-parallel layer
// allreduces its W and b gradients first), down to the gradient of this rank's embedding output.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "model/connections.hpp"
#include "model/dense_layer.hpp"

namespace embscale::model {

struct DenseSpec {
  std::int64_t outputs = 0;
  PartitionDim partition = PartitionDim::kData;
};

class DenseTower {
 public:
  // `inputs`: features of the embedding output per sample; layer i's W starts from
  // initial_weight(seed + i, ...). Collective over `comm` (the layers' shares).
  DenseTower(comm::Communicator& comm, std::int64_t inputs, const std::vector<DenseSpec>& layers, std::uint64_t seed,
             float learning_rate);
  ~DenseTower();

  // This rank's rows (its share of `global_rows`, core's sample_share_of) x inputs -> this rank's
  // rows x outputs() of the last layer. Collective.
  std::vector<float> forward(std::span<const float> input, std::int64_t global_rows);
  // The gradient of forward's result -> the gradient of its input (this rank's rows x inputs);
  // updates every layer. Collective.
  std::vector<float> backward(std::span<const float> output_grad);

  std::int64_t outputs() const noexcept;
  const DenseLayer& layer(std::size_t i) const { return *layers_.at(i); }
  std::size_t layers() const noexcept { return layers_.size(); }

 private:
  comm::Communicator& comm_;
  std::int64_t inputs_;
  std::vector<DenseSpec> specs_;
  std::vector<std::unique_ptr<DenseLayer>> layers_;
  std::int64_t global_rows_ = 0;  // of the last forward
};

}  // namespace embscale::model
