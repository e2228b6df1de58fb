#include "run/dense_objective.hpp"

#include <algorithm>

#include "core/hash.hpp"
#include "embedding/regression_objective.hpp"
#include "model/blas.hpp"
#include "model/dense_graph.hpp"
#include "model/dense_optimizer.hpp"

namespace embscale::run {

class DenseModel {
 public:
  DenseModel(comm::Communicator& comm, const config::Config& config)
      : comm_(comm), config_(config),
        graph_(config, model::graph_inputs(config), hash_combine(config.solver.seed, 0xde45e70e4ULL), &comm),
        optimizer_(config.optimizer) {}

  double step(const Batch& batch, std::span<const std::span<const float>> pooled,
              std::span<const std::span<float>> grad, embedding::StepRecorder& recorder) {
    recorder.begin_layer("", kDensePhases, {&comm_});
    const model::StepInfo info{batch.num_samples, config_.solver.batchsize, batch.first_sample, ++steps_, true};
    for (std::size_t i = 0; i < pooled.size(); ++i) set(graph_.input(config_.embeddings[i].top), pooled[i]);
    if (!config_.data.dense_top.empty()) set(graph_.input(config_.data.dense_top), batch.dense);
    if (!config_.data.label_top.empty()) set(graph_.input(config_.data.label_top), batch.labels);
    double loss = graph_.forward(info);
    recorder.lap("dense_forward");
    if (!graph_.has_loss()) {  // the stand-in regression on the model's output
      auto& out = graph_.output();
      out.grad.resize(out.value.size());
      loss = embedding::regression_loss_and_gradient_per_sample(batch, out.value, out.shape.elements(),
                                                                config_.solver.batchsize, out.grad);
    }
    recorder.lap("loss");
    graph_.backward(info);
    for (std::size_t i = 0; i < grad.size(); ++i) {
      const auto& g = graph_.input(config_.embeddings[i].top).grad;
      std::copy(g.begin(), g.end(), grad[i].begin());
    }
    recorder.lap("dense_backward");
    graph_.reduce_gradients(info);
    recorder.lap("dense_allreduce");
    optimizer_.apply(graph_.parameters(), info.step);
    recorder.lap("dense_update");
    return loss;
  }

 private:
  static void set(model::Blob<float>& blob, std::span<const float> values) {
    blob.value.assign(values.begin(), values.end());
  }

  comm::Communicator& comm_;
  const config::Config& config_;
  model::DenseGraph<float> graph_;
  model::DenseOptimizer<float> optimizer_;
  std::int64_t steps_ = 0;  // applied so far (warm-up included): the schedule's and Adam's step
};

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
