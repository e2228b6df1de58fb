// DenseGraph: the config's dense layers (config::Config::dense_layers, HugeCTR's names) as one
// model over this rank's samples, data-parallel: each rank runs every layer on its share of the
// batch and holds every replicated parameter (a feature-parallel InnerProduct holds its columns
// and moves its input and output over the communicator itself).
//
//   inputs (set by the caller each step): each embedding layer's top [batch, slots, dim], the
//     Data layer's dense top [batch, dense_dim] and label top [batch, label_dim]
//   forward: every layer in file order (a layer's bottoms are named before it: config)
//   loss: the loss layer's (BinaryCrossEntropyLoss) summed over this rank's samples, each
//     divided by the global batch, plus this rank's share of the regularizer (rank 0 counts the
//     replicated parameters, each rank its local ones), so the ranks' shares sum to the loss. Without a loss layer the graph's output (the one top no layer reads)
//     is the caller's to score (the run's stand-in regression), setting its gradient.
//   backward: every layer in reverse; then reduce_gradients sums the replicated parameters'
//     gradients over ranks in one allreduce and adds the regularizer's; the optimizer
//     (dense_optimizer.hpp) updates both flat buffers.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "model/dense_op.hpp"

namespace embscale::model {

struct GraphInput {
  std::string name;
  SampleShape shape;
};

// The graph's inputs for `config`: each embedding layer's top ([batch, its slots, its
// embedding_vec_size]), the Data layer's dense and label tops where it names them.
std::vector<GraphInput> graph_inputs(const config::Config& config);

template <typename T> class DenseGraph {
 public:
  // Builds every layer: shapes inferred and checked, an InputError naming the layer and what it
  // expected. With `comm` the parameters are allocated and initialized from `seed` (collective
  // where a layer partitions its parameters); without, the graph only checks the config for
  // `ranks` ranks (validate).
  DenseGraph(const config::Config& config, const std::vector<GraphInput>& inputs, std::uint64_t seed,
             comm::Communicator* comm, int ranks = 1);
  ~DenseGraph();
  DenseGraph(const DenseGraph&) = delete;
  DenseGraph& operator=(const DenseGraph&) = delete;

  // An input tensor by name: the caller sets value (step.rows rows) before forward and reads
  // grad after backward (an embedding output's gradient).
  Blob<T>& input(std::string_view name);

  // Every layer forward; this rank's share of the loss (0 without a loss layer).
  double forward(const StepInfo& step);
  // Every layer backward (grads zeroed first, but the output's without a loss layer): each input's
  // gradient and this rank's part of each parameter's (feature-parallel layers: collective).
  void backward(const StepInfo& step);
  // The replicated parameters' gradients summed over ranks (one allreduce), then the
  // regularizer's gradient added. Collective.
  void reduce_gradients(const StepInfo& step);
  // `share` of the regularizer's gradient added to the regularized parameters' (no allreduce):
  // where another party sums the ranks' gradients (a parameter server holding the dense
  // parameters), each of n ranks adds 1/n of it.
  void add_regularizer_gradient(const StepInfo& step, double share);

  bool has_loss() const noexcept { return loss_ != nullptr; }
  // Without a loss layer: the top no layer reads (set its grad after forward).
  Blob<T>& output();
  // With a loss layer: its first bottom, the model's logit per sample (AUC scores its sigmoid).
  const Blob<T>& logits() const;

  ParameterStore<T>& parameters() noexcept { return parameters_; }
  std::size_t layers() const noexcept { return ops_.size(); }
  // This rank's share of the regularizer's penalty of the current parameters (in forward's loss).
  double regularizer_penalty(std::int64_t global_rows) const;

 private:
  struct Node;
  Blob<T>& blob(std::string_view name);
  comm::Communicator* comm_;
  ParameterStore<T> parameters_;
  std::vector<std::unique_ptr<Blob<T>>> blobs_;
  std::vector<std::string> blob_names_;
  std::vector<Node> nodes_;
  std::vector<std::unique_ptr<DenseOp<T>>> ops_;
  LossOp<T>* loss_ = nullptr;
  Blob<T>* output_ = nullptr;
  Blob<T>* logits_ = nullptr;
  Blob<T>* loss_top_ = nullptr;  // each sample's loss over the global batch
};

// Whether the config's dense layers hold a loss layer (BinaryCrossEntropyLoss).
bool has_loss_layer(const config::Config& config);

// Builds the config's dense layers for `ranks` ranks without running them: every layer's
// parameters and shapes checked (an InputError naming the layer). Nothing without dense layers.
void check_dense_graph(const config::Config& config, int ranks);

}  // namespace embscale::model
