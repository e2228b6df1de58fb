#include "ps/ps_trainer.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "embedding/pooling.hpp"
#include "embedding/regression_objective.hpp"

namespace embscale::ps {

PsTrainer::PsTrainer(PsClient& client, std::int32_t dim, bool mean, std::int64_t global_batch)
    : client_(client), dim_(dim), mean_(mean), global_batch_(global_batch) {
  EMBSCALE_EXPECTS(dim >= 1 && global_batch >= 1, "a trainer needs dim >= 1 and a global batch");
}

double PsTrainer::step(std::int64_t step, const Batch& batch, embedding::StepRecorder& recorder) {
  recorder.begin_layer("", kTrainerPhases, {});
  const auto dim = static_cast<std::size_t>(dim_);
  keys_.assign(batch.keys.begin(), batch.keys.end());
  std::sort(keys_.begin(), keys_.end());
  keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  inverse_.resize(batch.keys.size());
  for (std::size_t k = 0; k < batch.keys.size(); ++k)
    inverse_[k] = static_cast<std::uint32_t>(std::lower_bound(keys_.begin(), keys_.end(), batch.keys[k]) - keys_.begin());
  recorder.lap("dedup");

  rows_.resize(keys_.size() * dim);
  client_.pull(step, keys_, rows_);
  recorder.lap("pull");
  pooled_.resize(static_cast<std::size_t>(batch.num_bags()) * dim);
  embedding::pool_bags(batch, inverse_, rows_, dim, mean_, pooled_);
  recorder.lap("pool");
  grad_pooled_.resize(pooled_.size());
  const double loss = embedding::regression_loss_and_gradient(batch, pooled_, dim_, global_batch_, grad_pooled_);
  recorder.lap("loss");
  grads_.resize(rows_.size());
  embedding::unpool_bags(batch, inverse_, grad_pooled_, dim, mean_, grads_);
  recorder.lap("unpool");
  client_.push(step, keys_, grads_);
  recorder.lap("push");
  return loss;
}

}  // namespace embscale::ps
