// HugeCTR's evaluation in a training run (config::Evaluation): after every eval_interval timed
// iterations, eval_batches x batchsize_eval held-out samples run forward only (the embedding
// tables read without being changed, Dropout off), in batches of the training batch (the schemes'
// exchanges are sized by it; the count rounded up to whole batches), and are scored over every
// rank's samples: the exact AUC of the loss layer's logits (lib/model/auc.hpp), the average loss, and,
// on synthetic data with the planted label model, the ceiling: the planted model's own AUC on
// the same samples. "AUC:<t>" in eval_metrics ends training at the evaluation that reaches t.
//
// Held-out samples: a trace's eval_source (its first batches, the same at every evaluation, as
// HugeCTR reads its test set), or the synthetic source's held-out stream: the same
// generator with another sample seed (the planted model's hidden values unchanged), drawn from
// the training distribution of the iteration evaluated (drift and growth included).
#pragma once

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <ostream>
#include <span>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"
#include "run/dense_objective.hpp"

namespace embscale::run {

struct EvaluationResult {
  std::int64_t iteration = 0;  // timed iterations trained before it
  double auc = std::numeric_limits<double>::quiet_NaN();
  double auc_stderr = std::numeric_limits<double>::quiet_NaN();   // DeLong's (model/auc.hpp)
  double auc_ceiling = std::numeric_limits<double>::quiet_NaN();  // the planted model's; NaN otherwise
  double loss = 0.0;                                              // mean over the evaluation's samples
  std::int64_t samples = 0;
};

// What evaluation needs of a config, on any number of ranks: a loss layer to score, held-out data
// (a trace's eval_source). InputError naming the field. Nothing without it.
void check_evaluation(const config::Config& config);

// "evaluation after iteration 100: AUC 0.7712 +- 0.0036 (the planted model's 0.8123), loss 0.5321,
// 16384 samples", one line (+- DeLong's standard error).
void print_evaluation(std::ostream& out, const std::string& prefix, const EvaluationResult& result);

class Evaluator {
 public:
  // The embedding part's forward of an evaluation batch after `iteration` timed iterations, the
  // tables unchanged: each embedding layer's pooled output, valid until the next call.
  using Forward = std::function<std::vector<std::span<const float>>(std::int64_t iteration, const Batch& batch)>;

  // Collective over `comm` (opens the held-out source on every rank), the ranks that hold the
  // samples: the engine's, or a parameter-server run's trainers.
  Evaluator(comm::Communicator& comm, const config::Config& config, Forward forward, DenseModel& model);
  // The engine's forward (EmbeddingEngine::evaluate).
  Evaluator(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine,
            DenseModel& model);
  ~Evaluator();

  // The evaluation after `iteration` timed iterations. Collective.
  EvaluationResult evaluate(std::int64_t iteration);

 private:
  struct Source;
  comm::Communicator& comm_;
  const config::Config& config_;
  Forward forward_;
  DenseModel& model_;
  std::unique_ptr<Source> source_;
};

}  // namespace embscale::run
