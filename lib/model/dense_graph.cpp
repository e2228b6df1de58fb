#include "model/dense_graph.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "model/layers/layer_registry.hpp"

namespace embscale::model {

template <typename T> struct DenseGraph<T>::Node {
  std::vector<const Blob<T>*> bottoms_in;  // forward's view
  std::vector<Blob<T>*> bottoms;           // backward's (it adds into their grads)
  std::vector<Blob<T>*> tops;
  std::vector<const Blob<T>*> tops_in;
};

std::vector<GraphInput> graph_inputs(const config::Config& config) {
  std::vector<GraphInput> inputs;
  for (const auto& layer : config.embeddings)
    inputs.push_back({layer.top, {static_cast<std::int64_t>(layer.slots.size()), layer.embedding_vec_size, true}});
  if (!config.data.dense_top.empty()) inputs.push_back({config.data.dense_top, {1, config.data.dense_dim}});
  if (!config.data.label_top.empty()) inputs.push_back({config.data.label_top, {1, config.data.label_dim}});
  return inputs;
}

template <typename T>
DenseGraph<T>::DenseGraph(const config::Config& config, const std::vector<GraphInput>& inputs, std::uint64_t seed,
                          comm::Communicator* comm, int ranks)
    : comm_(comm) {
  const auto add_blob = [&](const std::string& name, SampleShape shape) {
    blobs_.push_back(std::make_unique<Blob<T>>());
    blobs_.back()->shape = shape;
    blob_names_.push_back(name);
    return blobs_.back().get();
  };
  for (const auto& in : inputs) add_blob(in.name, in.shape);
  std::vector<bool> read(blobs_.size(), false);
  for (std::size_t i = 0; i < config.dense_layers.size(); ++i) {
    const config::DenseLayerNode& node = config.dense_layers[i];
    const LayerEntry* entry = find_layer(node.type);
    EMBSCALE_EXPECTS(entry != nullptr, "the config keeps only the dense layer types lib/model builds");
    Node n;
    std::vector<SampleShape> shapes;
    for (const auto& name : node.bottoms) {
      Blob<T>& b = blob(name);  // named before it: config
      n.bottoms.push_back(&b);
      n.bottoms_in.push_back(&b);
      shapes.push_back(b.shape);
      read[static_cast<std::size_t>(std::find(blob_names_.begin(), blob_names_.end(), name) - blob_names_.begin())] =
          true;
    }
    const LayerBuild<T> build{node,
                              config.origin,
                              shapes,
                              i,
                              hash_combine(seed, static_cast<std::uint64_t>(i)),
                              comm ? comm->rank() : 0,
                              comm ? comm->size() : ranks,
                              comm,
                              parameters_};
    ops_.push_back(entry->maker<T>()(build));
    const auto top_shapes = ops_.back()->top_shapes();
    EMBSCALE_EXPECTS(top_shapes.size() == node.tops.size(), "a layer gives one shape per top (it checks the count)");
    for (std::size_t t = 0; t < node.tops.size(); ++t) {
      Blob<T>* top = add_blob(node.tops[t], top_shapes[t]);
      n.tops.push_back(top);
      n.tops_in.push_back(top);
      read.push_back(false);
    }
    if (entry->loss) {
      if (loss_ != nullptr)
        throw InputError(config.origin + ": " + node.path + ": one loss layer per model; \"" + node.type +
                         "\" is a second one");
      loss_ = static_cast<LossOp<T>*>(ops_.back().get());
      logits_ = n.bottoms.front();
      loss_top_ = n.tops.front();
      read.back() = true;  // the loss's own top is the end of the graph
    }
    nodes_.push_back(std::move(n));
  }
  if (!loss_ && !nodes_.empty()) {
    std::vector<std::string> unread;
    for (std::size_t b = inputs.size(); b < blobs_.size(); ++b)
      if (!read[b]) unread.push_back(blob_names_[b]);
    if (unread.size() != 1) {
      std::string list;
      for (const auto& name : unread) list += (list.empty() ? "\"" : ", \"") + name + "\"";
      throw InputError(config.origin +
                       ": layers: a model without a loss layer (BinaryCrossEntropyLoss) is scored by "
                       "the stand-in regression on its one output, a top no layer reads; these tops are read by "
                       "none: " +
                       list);
    }
    output_ = &blob(unread.front());
  }
  if (comm) {
    parameters_.allocate();
    for (auto& op : ops_) op->initialize();
  }
}

template <typename T> DenseGraph<T>::~DenseGraph() = default;

template <typename T> Blob<T>& DenseGraph<T>::blob(std::string_view name) {
  const auto it = std::find(blob_names_.begin(), blob_names_.end(), name);
  EMBSCALE_EXPECTS(it != blob_names_.end(), "a tensor the graph holds");
  return *blobs_[static_cast<std::size_t>(it - blob_names_.begin())];
}

template <typename T> Blob<T>& DenseGraph<T>::input(std::string_view name) { return blob(name); }

template <typename T> Blob<T>& DenseGraph<T>::output() {
  EMBSCALE_EXPECTS(output_ != nullptr, "the graph has an output (no loss layer)");
  return *output_;
}

template <typename T> const Blob<T>& DenseGraph<T>::logits() const {
  EMBSCALE_EXPECTS(logits_ != nullptr, "the graph has a loss layer");
  return *logits_;
}

template <typename T> double DenseGraph<T>::forward(const StepInfo& step) {
  EMBSCALE_EXPECTS(parameters_.allocated(), "a graph built to check a config does not run");
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    Node& n = nodes_[i];
    for (Blob<T>* top : n.tops) top->value.resize(static_cast<std::size_t>(step.rows * top->shape.elements()));
    ops_[i]->forward(n.bottoms_in, n.tops, step);
  }
  if (!loss_) return 0.0;
  double loss = 0.0;
  for (const T v : loss_top_->value) loss += static_cast<double>(v);
  return loss + regularizer_penalty(step.global_rows);
}

// Rank 0 counts the replicated parameters (every rank holds the same), each rank its local ones.
template <typename T> double DenseGraph<T>::regularizer_penalty(std::int64_t global_rows) const {
  if (!loss_ || loss_->regularizer() == Regularizer::kNone) return 0.0;
  const bool counts_replicated = !comm_ || comm_->rank() == 0;
  double sum = 0.0;
  for (const ParameterHandle& h : parameters_.regularized()) {
    if (h.sharing == ParameterSharing::kReplicated && !counts_replicated) continue;
    for (const T w : parameters_.values(h))
      sum += loss_->regularizer() == Regularizer::kL1 ? std::abs(static_cast<double>(w))
                                                      : 0.5 * static_cast<double>(w) * static_cast<double>(w);
  }
  return loss_->lambda() * sum / static_cast<double>(global_rows);
}

template <typename T> void DenseGraph<T>::backward(const StepInfo& step) {
  for (auto& b : blobs_)
    if (b.get() != output_) b->grad.assign(b->value.size(), T(0));
  EMBSCALE_EXPECTS(!output_ || output_->grad.size() == output_->value.size(),
                   "the output's gradient is set before backward");
  for (std::size_t i = nodes_.size(); i-- > 0;) ops_[i]->backward(nodes_[i].bottoms, nodes_[i].tops_in, step);
}

template <typename T> void DenseGraph<T>::reduce_gradients(const StepInfo& step) {
  const std::span<T> replicated = parameters_.grads(ParameterSharing::kReplicated);
  if (comm_ && comm_->size() > 1 && !replicated.empty())
    comm_->allreduce(std::span<const T>(replicated), replicated, comm::ReduceOp::kSum);
  add_regularizer_gradient(step, 1.0);
}

template <typename T> void DenseGraph<T>::add_regularizer_gradient(const StepInfo& step, double share) {
  if (loss_ && loss_->regularizer() != Regularizer::kNone) {
    const T scale = static_cast<T>(share * loss_->lambda() / static_cast<double>(step.global_rows));
    for (const ParameterHandle& h : parameters_.regularized()) {
      const std::span<T> w = parameters_.values(h), g = parameters_.grads(h);
      for (std::size_t k = 0; k < w.size(); ++k)
        g[k] += loss_->regularizer() == Regularizer::kL1 ? scale * (w[k] > 0   ? T(1)
                                                                    : w[k] < 0 ? T(-1)
                                                                               : T(0))
                                                         : scale * w[k];
    }
  }
}

bool has_loss_layer(const config::Config& config) {
  return std::any_of(config.dense_layers.begin(), config.dense_layers.end(), [](const config::DenseLayerNode& node) {
    const LayerEntry* entry = find_layer(node.type);
    return entry != nullptr && entry->loss;
  });
}

void check_dense_graph(const config::Config& config, int ranks) {
  if (config.dense_layers.empty()) return;
  const DenseGraph<float> graph(config, graph_inputs(config), 0, nullptr, ranks);
}

template class DenseGraph<float>;
template class DenseGraph<double>;

}  // namespace embscale::model
