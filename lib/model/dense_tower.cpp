#include "model/dense_tower.hpp"

#include "core/error.hpp"

namespace embscale::model {

DenseTower::DenseTower(comm::Communicator& comm, std::int64_t inputs, const std::vector<DenseSpec>& layers,
                       std::uint64_t seed, float learning_rate)
    : comm_(comm), inputs_(inputs), specs_(layers) {
  EMBSCALE_EXPECTS(inputs >= 1 && !layers.empty(), "a dense tower has inputs and at least one layer");
  std::int64_t width = inputs;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    layers_.push_back(
        std::make_unique<DenseLayer>(comm, width, layers[i].outputs, layers[i].partition, seed + i, learning_rate));
    width = layers[i].outputs;
  }
}

DenseTower::~DenseTower() = default;

std::int64_t DenseTower::outputs() const noexcept { return specs_.back().outputs; }

std::vector<float> DenseTower::forward(std::span<const float> input, std::int64_t global_rows) {
  global_rows_ = global_rows;
  const int rank = comm_.rank(), ranks = comm_.size();
  std::vector<float> x(input.begin(), input.end());
  PartitionDim from = PartitionDim::kData;
  std::int64_t width = inputs_;
  for (std::size_t i = 0; i < layers_.size(); ++i) {
    const BlobShape shape{global_rows, width};
    const PartitionDim to = specs_[i].partition;
    const std::vector<float> in = connect_forward(comm_, shape, from, to, Connection::kOneToAll, x);
    const std::int64_t rows = to == PartitionDim::kData ? part_shape(shape, to, rank, ranks).rows : global_rows;
    x = layers_[i]->forward(in, rows);
    from = to;
    width = specs_[i].outputs;
  }
  return connect_forward(comm_, {global_rows, width}, from, PartitionDim::kData, Connection::kOneToOne, x);
}

std::vector<float> DenseTower::backward(std::span<const float> output_grad) {
  const std::int64_t rows = global_rows_;
  std::vector<float> g = connect_backward(comm_, {rows, outputs()}, specs_.back().partition, PartitionDim::kData,
                                          Connection::kOneToOne, output_grad);
  for (std::size_t i = layers_.size(); i-- > 0;) {
    const std::vector<float> input_grad = layers_[i]->backward(g);
    const std::int64_t width = i == 0 ? inputs_ : specs_[i - 1].outputs;
    const PartitionDim from = i == 0 ? PartitionDim::kData : specs_[i - 1].partition;
    g = connect_backward(comm_, {rows, width}, from, specs_[i].partition, Connection::kOneToAll, input_grad);
  }
  return g;
}

}  // namespace embscale::model
