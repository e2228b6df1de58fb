#include "run/dense_objective.hpp"

#include <algorithm>
#include <memory>
#include <vector>

#include "core/hash.hpp"
#include "embedding/regression_objective.hpp"
#include "model/dense_tower.hpp"

namespace embscale::run {

void attach_dense_tower(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine) {
  if (config.dense.empty()) return;
  const auto at = std::find_if(config.embeddings.begin(), config.embeddings.end(),
                               [&](const auto& e) { return e.name == config.dense_input; });
  const auto layer = static_cast<std::size_t>(at - config.embeddings.begin());
  const embedding::LayerSpec& spec = engine.spec(layer);
  std::vector<model::DenseSpec> specs;
  for (const auto& d : config.dense)
    specs.push_back({d.num_output, d.partition_dim == 1 ? model::PartitionDim::kFeature : model::PartitionDim::kData});
  const std::int64_t inputs = static_cast<std::int64_t>(spec.slots()) * spec.dim();
  auto tower =
      std::make_shared<model::DenseTower>(comm, inputs, specs, hash_combine(config.solver.seed, 0xde45e70e4ULL),
                                          static_cast<float>(config.optimizer.learning_rate));
  auto output_grad = std::make_shared<std::vector<float>>();
  const std::int64_t global_batch = config.solver.batchsize;
  engine.set_objective(layer, [tower, output_grad, global_batch, prefix = engine.prefix(layer), &comm](
                                  const Batch& input, std::span<const float> pooled, std::span<float> grad,
                                  embedding::StepRecorder& recorder) {
    recorder.begin_layer(prefix, kDensePhases, {&comm});
    const std::vector<float> output = tower->forward(pooled, global_batch);
    recorder.lap("dense_forward");
    output_grad->resize(output.size());
    const double loss =
        embedding::regression_loss_and_gradient_per_sample(input, output, tower->outputs(), global_batch, *output_grad);
    recorder.lap("loss");
    const std::vector<float> input_grad = tower->backward(*output_grad);
    std::copy(input_grad.begin(), input_grad.end(), grad.begin());
    recorder.lap("dense_backward");
    return loss;
  });
}

}  // namespace embscale::run
