#include "run/dense_objective.hpp"

#include <algorithm>
#include <iterator>
#include <span>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "embedding/regression_objective.hpp"
#include "model/blas.hpp"
#include "model/dense_graph.hpp"
#include "model/dense_optimizer.hpp"

namespace embscale::run {

struct DenseModel::Parts {
  Parts(comm::Communicator& comm, const config::Config& config)
      : graph(config, model::graph_inputs(config), hash_combine(config.solver.seed, 0xde45e70e4ULL), &comm),
        optimizer(config.optimizer) {}
  model::DenseGraph<float> graph;
  model::DenseOptimizer<float> optimizer;
};

DenseModel::DenseModel(comm::Communicator& comm, const config::Config& config)
    : parts_(std::make_unique<Parts>(comm, config)), comm_(comm), config_(config) {}

DenseModel::~DenseModel() = default;

bool DenseModel::has_loss_layer() const { return parts_->graph.has_loss(); }

void DenseModel::set_inputs(const Batch& batch, std::span<const std::span<const float>> pooled) {
  auto& graph = parts_->graph;
  const auto set = [](model::Blob<float>& blob, std::span<const float> values) {
    blob.value.assign(values.begin(), values.end());
  };
  for (std::size_t i = 0; i < pooled.size(); ++i) set(graph.input(config_.embeddings[i].top), pooled[i]);
  if (!config_.data.dense_top.empty()) set(graph.input(config_.data.dense_top), batch.dense);
  if (!config_.data.label_top.empty()) set(graph.input(config_.data.label_top), batch.labels);
}

double DenseModel::step(const Batch& batch, std::span<const std::span<const float>> pooled,
                        std::span<const std::span<float>> grad, embedding::StepRecorder& recorder) {
  auto& graph = parts_->graph;
  const bool held = server_held_by_trainers_ > 0;
  recorder.begin_layer("", std::span(kDensePhases).first(held ? 3 : std::size(kDensePhases)), {&comm_});
  const model::StepInfo info{batch.num_samples, config_.solver.batchsize, batch.first_sample, ++steps_, true};
  set_inputs(batch, pooled);
  double loss = graph.forward(info);
  recorder.lap("dense_forward");
  if (!graph.has_loss()) {  // the stand-in regression on the model's output
    auto& out = graph.output();
    out.grad.resize(out.value.size());
    loss = embedding::regression_loss_and_gradient_per_sample(batch, out.value, out.shape.elements(),
                                                              config_.solver.batchsize, out.grad);
  }
  recorder.lap("loss");
  graph.backward(info);
  for (std::size_t i = 0; i < grad.size(); ++i) {
    const auto& g = graph.input(config_.embeddings[i].top).grad;
    std::copy(g.begin(), g.end(), grad[i].begin());
  }
  recorder.lap("dense_backward");
  if (held) {
    graph.add_regularizer_gradient(info, 1.0 / server_held_by_trainers_);
    return loss;
  }
  graph.reduce_gradients(info);
  recorder.lap("dense_allreduce");
  parts_->optimizer.apply(graph.parameters(), info.step);
  recorder.lap("dense_update");
  return loss;
}

void DenseModel::hold_parameters_on_servers(int trainers) {
  EMBSCALE_EXPECTS(trainers >= 1, "at least one trainer");
  EMBSCALE_EXPECTS(parts_->graph.parameters().count(model::ParameterSharing::kLocal) == 0,
                   "a parameter server holds replicated dense parameters only (no feature-parallel layer)");
  server_held_by_trainers_ = trainers;
}

std::span<float> DenseModel::replicated_values() {
  return parts_->graph.parameters().values(model::ParameterSharing::kReplicated);
}

std::span<const float> DenseModel::replicated_gradients() {
  return parts_->graph.parameters().grads(model::ParameterSharing::kReplicated);
}

std::span<const float> DenseModel::last_logits() const {
  if (!parts_->graph.has_loss()) return {};
  return parts_->graph.logits().value;
}

DenseModel::Scores DenseModel::evaluate(const Batch& batch, std::span<const std::span<const float>> pooled,
                                        std::int64_t global_rows) {
  auto& graph = parts_->graph;
  EMBSCALE_EXPECTS(graph.has_loss(), "evaluation scores the loss layer's logits (check_evaluation)");
  set_inputs(batch, pooled);
  const model::StepInfo info{batch.num_samples, global_rows, batch.first_sample, steps_, false};
  Scores scores;
  scores.loss = graph.forward(info) - graph.regularizer_penalty(global_rows);  // the loss of the samples alone
  const auto& logits = graph.logits().value;
  scores.logits.assign(logits.begin(), logits.end());
  return scores;
}

std::shared_ptr<DenseModel> attach_dense_model(comm::Communicator& comm, const config::Config& config,
                                               embedding::EmbeddingEngine& engine) {
  if (config.dense_layers.empty()) return nullptr;
  // An MPI run puts a rank on every core: the BLAS runs on the rank's own thread.
  model::set_blas_threads(1);
  auto model = std::make_shared<DenseModel>(comm, config);
  engine.set_model_objective([model](const Batch& batch, std::span<const std::span<const float>> pooled,
                                     std::span<const std::span<float>> grad, embedding::StepRecorder& recorder) {
    return model->step(batch, pooled, grad, recorder);
  });
  return model;
}

}  // namespace embscale::run
