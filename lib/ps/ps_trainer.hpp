// PsTrainer: one trainer's training step on the parameter server (seed 001's training steps):
// the batch's distinct ids -> split_ids and prefetch (PsClient::pull) -> forward (pool each bag:
// sum or mean) -> the stand-in dense model's gradient (regression_objective.hpp) -> each id's
// gradient summed over its bags -> split and send (PsClient::push). The server applies the
// optimizer.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "ps/ps_client.hpp"

namespace embscale::ps {

class PsTrainer {
 public:
  // `global_batch`: the samples of a step over all trainers (the objective divides by it).
  PsTrainer(PsClient& client, std::int32_t dim, bool mean, std::int64_t global_batch);

  // Step `step` (1-based, one more each call) on this trainer's `batch`; returns its share of
  // the loss.
  double step(std::int64_t step, const Batch& batch);
  // The last step's pooled vectors [bags x dim] (mean: averaged), read before its update.
  std::span<const float> pooled() const noexcept { return pooled_; }
  std::size_t distinct_keys() const noexcept { return keys_.size(); }

 private:
  PsClient& client_;
  std::int32_t dim_;
  bool mean_;
  std::int64_t global_batch_;
  std::vector<Key> keys_;               // the batch's distinct ids, ascending
  std::vector<std::uint32_t> inverse_;  // per occurrence: its id's index in keys_
  std::vector<float> rows_, pooled_, grad_pooled_, grads_;
};

}  // namespace embscale::ps
