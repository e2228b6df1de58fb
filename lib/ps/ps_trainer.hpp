// PsTrainer: one trainer's training step on the parameter server (Paddle's training steps):
// split_ids (the batch's distinct ids grouped by server, in one pass of the engine's key router)
// -> prefetch (PsClient::pull_grouped: rows received in place) -> forward (pool each bag: sum or
// mean) -> the model: the config's dense layers (a TrainerObjective: the run's DenseModel over the
// trainers), or the stand-in's gradient (regression_objective.hpp) -> each id's gradient summed
// over its bags -> send (PsClient::push_grouped). The server applies the optimizer.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "embedding/key_router.hpp"
#include "embedding/step_recorder.hpp"
#include "ps/ps_client.hpp"

namespace embscale::ps {

// A trainer's phases, in the order one step records them.
inline constexpr embedding::PhaseDefinition kTrainerPhases[] = {
    {"dedup", "split_ids: the batch's distinct ids grouped by their server, and each occurrence's index among them"},
    {"pull",
     "prefetch: each server's ids out, their rows back, and the dense parameters with a dense model "
     "(waits for the servers' table reads and, asynchronous, for the staleness bound)"},
    {"pool", "each bag's rows summed (mean: averaged)"},
    {"loss", "stand-in dense model: a regression loss and its gradient per bag"},
    {"unpool", "each id's gradient, summed over the bags it is in"},
    {"push",
     "send: each server's ids and gradients out, and the dense gradients with a dense model (the server "
     "applies the optimizer)"},
};

// The model over a trainer's pooled vectors ([bags x dim]): this trainer's share of the loss,
// and each pooled value's gradient into `grad_pooled`; it records its own phases in the recorder
// (the trainer's phase "loss" is then not recorded).
using TrainerObjective = std::function<double(const Batch& batch, std::span<const float> pooled,
                                              std::span<float> grad_pooled, embedding::StepRecorder& recorder)>;

// The dense parameters the servers hold (ParameterServer's dense slices), where the trainer
// receives them before each step's model and takes their gradients from after it: the model's
// own buffers (run::DenseModel::replicated_values / replicated_gradients). Empty: none.
struct DenseParameters {
  std::span<float> values;
  std::span<const float> grads;
};

class PsTrainer {
 public:
  // `global_batch`: the samples of a step over all trainers (the objective divides by it).
  // Without an objective: the stand-in regression.
  PsTrainer(PsClient& client, std::int32_t dim, bool mean, std::int64_t global_batch, TrainerObjective objective = {},
            DenseParameters dense = {});

  // Step `step` (1-based, one more each call) on this trainer's `batch`; returns its share of
  // the loss. `recorder` gets the step's kTrainerPhases (begin_step is the caller's).
  double step(std::int64_t step, const Batch& batch, embedding::StepRecorder& recorder);
  // The last step's pooled vectors [bags x dim] (mean: averaged), read before its update.
  std::span<const float> pooled() const noexcept { return pooled_; }
  // An evaluation's forward before step `step`: `batch`'s pooled vectors from rows read without
  // changing the servers' tables (PsClient::read_grouped; the dense parameters are read too);
  // valid until the next call.
  std::span<const float> evaluation_pooled(std::int64_t step, const Batch& batch);
  std::size_t distinct_keys() const noexcept { return routed_.send_keys.size(); }

 private:
  PsClient& client_;
  std::int32_t dim_;
  bool mean_;
  std::int64_t global_batch_;
  TrainerObjective objective_;
  DenseParameters dense_;
  embedding::KeyRouter router_;
  embedding::RoutedKeys routed_;  // the batch's distinct ids grouped by server; per occurrence its id's index
  std::vector<float> rows_, pooled_, grad_pooled_, grads_;  // rows_ and grads_ in routed_.send_keys' order
  std::vector<float> evaluation_pooled_;
};

}  // namespace embscale::ps
