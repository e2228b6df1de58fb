#include "run/evaluation.hpp"

#include <cstdio>
#include <memory>
#include <optional>
#include <utility>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "embedding/step_recorder.hpp"
#include "model/auc.hpp"
#include "model/dense_graph.hpp"
#include "workloads/batch_source_factory.hpp"
#include "workloads/planted_labels.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::run {
namespace {

// The held-out stream's sample seed: a domain of the solver's seed apart from the training one.
constexpr std::uint64_t kEvaluationDomain = 0xe7a1;

// The forward passes of one evaluation: eval_batches x batchsize_eval samples in batches of the
// training batch (the schemes' exchanges are sized by it), the last one whole: rounded up.
std::int64_t eval_passes(const config::Config& config) {
  const auto& e = config.solver.evaluation;
  const std::int64_t batchsize = e.batchsize > 0 ? e.batchsize : config.solver.batchsize;
  return (e.batches * batchsize + config.solver.batchsize - 1) / config.solver.batchsize;
}

}  // namespace

void check_evaluation(const config::Config& config) {
  const auto& e = config.solver.evaluation;
  if (!e.runs()) return;
  if (!model::has_loss_layer(config))
    throw InputError(config.origin +
                     ": solver.eval_interval: evaluation scores the loss layer's logits, and the model has no loss "
                     "layer (BinaryCrossEntropyLoss)");
  if (config.data.format != config::DataFormat::kSynthetic && config.data.eval_source.empty())
    throw InputError(config.origin + ": layers[" + config.data.name +
                     "].eval_source: required with solver.eval_interval for a trace (the evaluation samples; the "
                     "synthetic source holds out a stream of its own)");
}

// The held-out batches: batch k of the evaluation after `iteration`.
struct Evaluator::Source {
  std::optional<workloads::SyntheticGenerator> synthetic;  // the held-out stream
  std::unique_ptr<BatchSource> trace;                      // eval_source
  std::optional<workloads::PlantedLabels> planted;         // the ceiling's model (synthetic only)
  std::int64_t batchsize = 0;                              // the training batch: each pass's
  std::int64_t passes = 0;

  Batch batch(std::int64_t iteration, std::int64_t k, int rank, int ranks) const {
    if (trace) return trace->next_batch(k, rank, ranks);
    const SampleShare share = sample_share_of(batchsize, rank, ranks);
    return synthetic->generate_range(iteration, {k * batchsize + share.first, share.count});
  }
};

Evaluator::Evaluator(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine,
                     DenseModel& model)
    : Evaluator(
          comm, config,
          [&engine, recorder = std::make_shared<embedding::StepRecorder>(engine.make_phase_clock())](
              std::int64_t, const Batch& batch) {
            engine.evaluate(batch, *recorder);
            std::vector<std::span<const float>> pooled;
            for (std::size_t l = 0; l < engine.layers(); ++l) pooled.push_back(engine.pooled(l));
            return pooled;
          },
          model) {}

Evaluator::Evaluator(comm::Communicator& comm, const config::Config& config, Forward forward, DenseModel& model)
    : comm_(comm), config_(config), forward_(std::move(forward)), model_(model), source_(std::make_unique<Source>()) {
  source_->batchsize = config.solver.batchsize;
  source_->passes = eval_passes(config);
  if (config.data.format == config::DataFormat::kSynthetic) {
    source_->synthetic.emplace(config.data, hash_combine(config.solver.seed, kEvaluationDomain),
                               source_->batchsize * source_->passes, config.solver.seed);
    if (const auto& planted = config.data.synthetic.planted_labels)
      source_->planted.emplace(*planted, planted->seed.value_or(config.solver.seed));
    return;
  }
  config::Config held_out = config;
  held_out.data.source = config.data.eval_source;
  held_out.data.num_samples = 0;
  held_out.solver.batchsize = source_->batchsize;
  source_->trace = workloads::make_batch_source(held_out);
  const std::int64_t available = source_->trace->iterations_available(source_->batchsize);
  if (available != BatchSource::kUnbounded && available < source_->passes)
    throw InputError(config.origin + ": solver.eval_batches: " + source_->trace->describe() + " holds " +
                     std::to_string(available) + " batches of " + std::to_string(source_->batchsize) +
                     " samples; an evaluation reads " + std::to_string(source_->passes) +
                     " (eval_batches x batchsize_eval samples in training batches)");
}

Evaluator::~Evaluator() = default;

void print_evaluation(std::ostream& out, const std::string& prefix, const EvaluationResult& r) {
  char line[256];
  const std::string ceiling = std::isnan(r.auc_ceiling)
                                  ? std::string()
                                  : " (the planted model's " + std::to_string(r.auc_ceiling).substr(0, 6) + ")";
  std::snprintf(line, sizeof line, "%sevaluation after iteration %lld: AUC %.4f +- %.4f%s, loss %.6g, %lld samples",
                prefix.c_str(), static_cast<long long>(r.iteration), r.auc, r.auc_stderr, ceiling.c_str(), r.loss,
                static_cast<long long>(r.samples));
  out << line << std::endl;
}

EvaluationResult Evaluator::evaluate(std::int64_t iteration) {
  std::vector<float> logits, labels, ceiling;
  double loss = 0.0;
  for (std::int64_t k = 0; k < source_->passes; ++k) {
    const Batch batch = source_->batch(iteration, k, comm_.rank(), comm_.size());
    const std::vector<std::span<const float>> pooled = forward_(iteration, batch);
    const DenseModel::Scores scores = model_.evaluate(batch, pooled, source_->batchsize);
    loss += scores.loss;
    logits.insert(logits.end(), scores.logits.begin(), scores.logits.end());
    for (std::int64_t s = 0; s < batch.num_samples; ++s) {
      labels.push_back(batch.labels[static_cast<std::size_t>(s * batch.label_dim)]);
      if (source_->planted) ceiling.push_back(static_cast<float>(source_->planted->logit(batch, s)));
    }
  }
  EvaluationResult r;
  r.iteration = iteration;
  r.loss = comm_.allreduce(loss, comm::ReduceOp::kSum) / static_cast<double>(source_->passes);
  r.samples = comm_.allreduce(static_cast<std::int64_t>(labels.size()), comm::ReduceOp::kSum);
  const model::Auc scored = model::global_auc(comm_, logits, labels);
  r.auc = scored.value;
  r.auc_stderr = scored.standard_error;
  if (source_->planted) r.auc_ceiling = model::global_auc(comm_, ceiling, labels).value;
  return r;
}

}  // namespace embscale::run
