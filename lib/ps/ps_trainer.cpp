#include "ps/ps_trainer.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "embedding/pooling.hpp"
#include "embedding/regression_objective.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {

PsTrainer::PsTrainer(PsClient& client, std::int32_t dim, bool mean, std::int64_t global_batch,
                     TrainerObjective objective, DenseParameters dense)
    : client_(client), dim_(dim), mean_(mean), global_batch_(global_batch), objective_(std::move(objective)),
      dense_(dense) {
  EMBSCALE_EXPECTS(dim >= 1 && global_batch >= 1, "a trainer needs dim >= 1 and a global batch");
}

double PsTrainer::step(std::int64_t step, const Batch& batch, embedding::StepRecorder& recorder) {
  recorder.begin_layer("", kTrainerPhases, {});
  const auto dim = static_cast<std::size_t>(dim_);
  const int servers = client_.servers();
  // split_ids: each distinct id once, grouped by the server that owns it (the placement the servers
  // shard by), in one pass of the engine's key router.
  router_.route(
      batch.keys, servers, [this](Key key) { return client_.server_of(key); }, routed_);
  recorder.lap("dedup");
  const std::span<const Key> keys = routed_.send_keys;
  rows_.resize(keys.size() * dim);
  client_.pull_grouped(step, keys, routed_.send_counts, rows_, dense_.values);
  recorder.lap("pull");
  pooled_.resize(static_cast<std::size_t>(batch.num_bags()) * dim);
  embedding::pool_bags(batch, routed_.inverse, rows_, dim, mean_, pooled_);
  recorder.lap("pool");
  grad_pooled_.resize(pooled_.size());
  double loss = 0.0;
  if (objective_) {
    loss = objective_(batch, pooled_, grad_pooled_, recorder);
    recorder.begin_layer("", kTrainerPhases, {});
  } else {
    loss = embedding::regression_loss_and_gradient(batch, pooled_, dim_, global_batch_, grad_pooled_);
    recorder.lap("loss");
  }
  grads_.resize(rows_.size());
  embedding::unpool_bags(batch, routed_.inverse, grad_pooled_, dim, mean_, grads_);
  recorder.lap("unpool");
  client_.push_grouped(step, keys, routed_.send_counts, grads_, dense_.grads);
  recorder.lap("push");
  return loss;
}

std::span<const float> PsTrainer::evaluation_pooled(std::int64_t step, const Batch& batch) {
  const auto dim = static_cast<std::size_t>(dim_);
  const int servers = client_.servers();
  router_.route(
      batch.keys, servers, [this](Key key) { return client_.server_of(key); }, routed_);
  rows_.resize(routed_.send_keys.size() * dim);
  client_.read_grouped(step, routed_.send_keys, routed_.send_counts, rows_, dense_.values);
  evaluation_pooled_.resize(static_cast<std::size_t>(batch.num_bags()) * dim);
  embedding::pool_bags(batch, routed_.inverse, rows_, dim, mean_, evaluation_pooled_);
  return evaluation_pooled_;
}

}  // namespace embscale::ps
