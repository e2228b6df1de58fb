#include "run/training_run.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <optional>

#include "comm/failure.hpp"
#include "core/error.hpp"
#include "core/statistics.hpp"
#include "core/stop_request.hpp"
#include "core/timer.hpp"
#include "embedding/engine.hpp"
#include "embedding/step_recorder.hpp"
#include "model/auc.hpp"
#include "model/dense_graph.hpp"
#include "run/checkpoint.hpp"
#include "run/dense_objective.hpp"
#include "run/run_devices.hpp"
#include "run/run_hooks.hpp"

namespace embscale::run {
namespace {

// nccl-tests' bus-bandwidth factor of a collective on n ranks (its PERFORMANCE.md): what turns
// the algorithm bandwidth into the bandwidth each link carries.
double bus_factor(std::string_view collective, int n) {
  const double ranks = n;
  if (collective == "allreduce") return 2.0 * (ranks - 1) / ranks;
  if (collective == "reduce_scatter" || collective == "allgather" || collective == "alltoallv" ||
      collective == "alltoall")
    return (ranks - 1) / ranks;
  return 1.0;
}

// The first `kept` iterations of the per-iteration measurements (a run that reached its AUC
// target ends early).
void keep_iterations(RunMeasurements& m, std::vector<double>& rank_step, std::vector<double>& local_loss,
                     std::size_t kept) {
  for (auto& [name, values] : m.timings) values.resize(kept);
  for (auto& [name, values] : m.counters) values.resize(kept);
  rank_step.resize(kept);
  local_loss.resize(kept);
}

// The per-step loop: a batch from the source, one engine step, what the recorder saw.
class Loop {
 public:
  // `devices`: a GPU run's (its layers' communicator and GPU), else null.
  Loop(comm::Communicator& comm, const config::Config& config, BatchSource& source, const RunDevices* devices)
      : comm_(comm), source_(source),
        engine_(devices ? devices->step_communicator() : comm, config, source.slot_sizes(),
                devices ? devices->engine_options() : embedding::EngineOptions{}),
        traffic_comms_{&comm} {
    dense_model_ = attach_dense_model(comm, config, engine_);
    // A scheme may split communicators off the run's (table_row_wise: its node and cross-node
    // groups), each with its own counts: the step's traffic is on all of them, each counted once.
    for (std::size_t l = 0; l < engine_.layers(); ++l)
      for (const auto* c : engine_.scheme(l).communicators())
        if (std::find(traffic_comms_.begin(), traffic_comms_.end(), c) == traffic_comms_.end())
          traffic_comms_.push_back(c);
  }

  // One forward + backward over all layers. Returns this rank's loss share.
  double step(std::int64_t iteration, embedding::StepRecorder& recorder) {
    const Batch batch = source_.next_batch(iteration, comm_.rank(), comm_.size());
    const auto before = traffic();
    const double loss = engine_.step(batch, recorder);
    const auto after = traffic();
    bytes_sent_ = static_cast<std::int64_t>(after.bytes_sent - before.bytes_sent);
    bytes_recv_ = static_cast<std::int64_t>(after.bytes_recv - before.bytes_recv);
    if (!dense_model_ || !dense_model_->has_loss_layer()) return loss;  // no batch AUC to score
    labels_.resize(static_cast<std::size_t>(batch.num_samples));
    for (std::int64_t s = 0; s < batch.num_samples; ++s)
      labels_[static_cast<std::size_t>(s)] = batch.labels[static_cast<std::size_t>(s * batch.label_dim)];
    return loss;
  }

  // The AUC of the last step's batch (the model's logits before its update, over every rank's
  // samples); NaN without a loss layer. Collective; outside the timed step.
  double batch_auc() {
    if (!dense_model_ || dense_model_->last_logits().empty()) return std::numeric_limits<double>::quiet_NaN();
    return model::global_auc(comm_, dense_model_->last_logits(), labels_).value;
  }

  // Counter values of the last step, by name: the run's bytes, each collective phase's bytes,
  // and the recorder's counters (the schemes' and the tables').
  std::vector<std::pair<std::string, std::int64_t>> counters(const embedding::StepRecorder& recorder) const {
    std::vector<std::pair<std::string, std::int64_t>> out = {{"bytes_sent", bytes_sent_}, {"bytes_recv", bytes_recv_}};
    for (const auto& phase : recorder.phases())
      if (*phase.definition->collective != '\0') {
        out.emplace_back(phase.name + ".bytes_sent", static_cast<std::int64_t>(phase.bytes_sent));
        out.emplace_back(phase.name + ".bytes_recv", static_cast<std::int64_t>(phase.bytes_recv));
      }
    out.insert(out.end(), recorder.counters().begin(), recorder.counters().end());
    return out;
  }

  embedding::EmbeddingEngine& engine() noexcept { return engine_; }
  DenseModel* dense_model() noexcept { return dense_model_.get(); }

 private:
  comm::OpStats traffic() const {
    comm::OpStats sum;
    for (const auto* c : traffic_comms_) {
      const auto t = c->stats().total();
      sum.bytes_sent += t.bytes_sent;
      sum.bytes_recv += t.bytes_recv;
    }
    return sum;
  }

  comm::Communicator& comm_;
  BatchSource& source_;
  embedding::EmbeddingEngine engine_;
  std::shared_ptr<DenseModel> dense_model_;               // the config's dense layers; null without
  std::vector<float> labels_;                             // the last batch's first label per sample
  std::vector<const comm::Communicator*> traffic_comms_;  // the run's first, then the schemes' own
  std::int64_t bytes_sent_ = 0, bytes_recv_ = 0;
};

// The eviction study of the layers the config's eviction section names: their stores show it
// every read call from now on. Null without the section.
std::unique_ptr<sim::EvictionStudy> start_eviction_study(const config::Config& config,
                                                         embedding::EmbeddingEngine& engine) {
  if (!config.eviction) return nullptr;
  std::vector<sim::MeasuredTable> tables;
  std::vector<embedding::RowStore*> stores;
  for (const auto& name : config.eviction->layers) {
    const auto layer = static_cast<std::size_t>(std::find_if(config.embeddings.begin(), config.embeddings.end(),
                                                             [&](const auto& e) { return e.name == name; }) -
                                                config.embeddings.begin());
    embedding::RowStore& store = engine.store(layer);
    EMBSCALE_EXPECTS(store.evicting_capacity() > 0, "the config admits only layers whose store evicts");
    tables.push_back(
        {name, store.evicting_capacity(), config.embeddings[layer].storage.table.score_strategy,
         [&store](const std::function<void(std::int64_t)>& visit) { store.for_each_evicting_key(visit); }});
    stores.push_back(&store);
  }
  auto study = std::make_unique<sim::EvictionStudy>(*config.eviction, std::move(tables), -config.solver.warmup_iter);
  for (std::size_t t = 0; t < stores.size(); ++t) stores[t]->set_access_observer(&study->observer(t));
  return study;
}

}  // namespace

void check_run_environment() {
  injected_fault();
  injected_delay();
}

std::string non_finite_loss_message(std::int64_t iteration, double loss, int rank) {
  return "iteration " + std::to_string(iteration) + ": the loss is " + std::to_string(loss) + " on rank " +
         std::to_string(rank) +
         ": the model diverged (a learning rate too high for its schedule, or none); the timings after it would be "
         "taken on non-finite rows. solver.non_finite_loss \"continue\" runs on regardless";
}

void check_config_for_ranks(const config::Config& config, int ranks) {
  EMBSCALE_EXPECTS(config.solver.batchsize >= 1,
                   "a per-rank batch is resolved (config::resolve_batch_for_ranks) first");
  if (config.solver.batchsize < ranks)
    throw InputError("solver.batchsize: expected at least one sample per rank (>= " + std::to_string(ranks) +
                     "), got " + std::to_string(config.solver.batchsize));
  // Whether static rows fit max_vocabulary_size_per_gpu depends on each scheme's placement: the
  // schemes check it when they make their stores, on every rank, before the first step.
  embedding::check_layers_for_ranks(config, config.data.slot_size_array, ranks);
  model::check_dense_graph(config, ranks);
  check_evaluation(config);
}

std::string scheme_names(const config::Config& config) {
  std::vector<std::string> names;
  for (const auto& layer : config.embeddings) {
    const std::string name = layer.sharding == config::kParameterServerSharding ? config::kParameterServerSharding
                                                                                : embedding::scheme_of(layer).name;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  std::string joined;
  for (const auto& n : names) joined += (joined.empty() ? "" : "+") + n;
  return joined;
}

void check_source_holds(const config::Config& config, const BatchSource& source) {
  const std::int64_t needed = config.solver.warmup_iter + config.solver.max_iter;
  const std::int64_t available = source.iterations_available(config.solver.batchsize);
  if (available != BatchSource::kUnbounded && available < needed)
    throw InputError("solver.max_iter: warmup_iter + max_iter = " + std::to_string(needed) +
                     " batches, but the data holds only " + std::to_string(available) + " batches of " +
                     std::to_string(config.solver.batchsize) + " samples. The data: " + source.describe());
}

RunSummary summarize_run(comm::Communicator& comm, std::int64_t global_batch, const RunMeasurements& m,
                         bool holds_rows) {
  RunSummary s;
  const auto iterations = static_cast<std::int64_t>(m.step_time.size());
  s.iterations = iterations;
  s.step_time_median_s = quantile(m.step_time, 0.5);
  s.step_time_p95_s = quantile(m.step_time, 0.95);
  // Sums over iterations of the counters named `suffix` (every layer's, qualified or not).
  const auto local_sum = [&](const std::string& suffix) {
    double sum = 0;
    for (const auto& [name, values] : m.counters)
      if (name == suffix || name.ends_with("." + suffix))
        for (const auto v : values) sum += static_cast<double>(v);
    return sum;
  };
  const double n = std::max<double>(1.0, static_cast<double>(iterations));
  const double local_keys = local_sum("keys");
  double sent = 0;  // the run-wide counter only (the per-phase ones are parts of it)
  if (const auto it = m.counters.find("bytes_sent"); it != m.counters.end())
    for (const auto v : it->second) sent += static_cast<double>(v);
  const double keys_per_step = comm.allreduce(local_keys, comm::ReduceOp::kSum) / n;
  s.bytes_sent_per_step = comm.allreduce(sent, comm::ReduceOp::kSum) / n;
  // max / mean over the ranks that take part.
  const auto imbalance = [&](double local, bool takes_part) {
    const double max = comm.allreduce(takes_part ? local : 0.0, comm::ReduceOp::kMax);
    const double sum = comm.allreduce(takes_part ? local : 0.0, comm::ReduceOp::kSum);
    const double ranks = comm.allreduce(takes_part ? 1.0 : 0.0, comm::ReduceOp::kSum);
    return sum > 0 ? max / (sum / ranks) : 1.0;
  };
  s.load_imbalance = imbalance(local_sum("lookups"), holds_rows);
  s.bytes_imbalance = imbalance(sent, true);
  const double unique = comm.allreduce(local_sum("unique_keys"), comm::ReduceOp::kSum);
  const double counted_keys = comm.allreduce(unique > 0 ? local_keys : 0.0, comm::ReduceOp::kSum);
  s.unique_key_ratio =
      unique > 0 && counted_keys > 0 ? unique / counted_keys : std::numeric_limits<double>::quiet_NaN();
  if (s.step_time_median_s > 0) {
    s.throughput_samples_per_s = static_cast<double>(global_batch) / s.step_time_median_s;
    s.throughput_keys_per_s = keys_per_step / s.step_time_median_s;
  }
  s.final_loss = m.loss.empty() ? 0.0 : m.loss.back();
  s.refused_keys = static_cast<std::int64_t>(comm.allreduce(local_sum("refused"), comm::ReduceOp::kSum));
  return s;
}

TrainingRun run_training(comm::Communicator& comm, const config::Config& config, BatchSource& source,
                         std::ostream* progress, const StopCheck& stop_check, const std::string& progress_prefix,
                         const RunDevices* devices) {
  check_config_for_ranks(config, comm.size());
  const std::int64_t iterations = config.solver.max_iter;
  check_source_holds(config, source);
  // Building the layers checks what only the schemes know (a rank's rows against
  // max_vocabulary_size_per_gpu): agreed, so bad input is reported once, before any step.
  std::unique_ptr<RunDevices> own_devices;
  if (devices == nullptr && config::runs_on_gpu(config)) {
    const HostPlacement placement = place_on_hosts(comm);
    comm::run_agreed(comm, [&] { own_devices = RunDevices::open(comm, placement, config); });
    devices = own_devices.get();
  }
  std::optional<Loop> built;
  std::optional<Evaluator> evaluator;
  comm::run_agreed(comm, [&] {
    built.emplace(comm, config, source, devices);
    if (config.solver.evaluation.runs()) evaluator.emplace(comm, config, built->engine(), *built->dense_model());
  });
  Loop& loop = *built;
  const std::unique_ptr<sim::EvictionStudy> eviction = start_eviction_study(config, loop.engine());
  std::optional<IncrementalDumps> dumps;  // solver.incremental_dump's (collective: makes its directory)
  if (config.solver.incremental_dump.runs()) dumps.emplace(comm, config, loop.engine());
  // solver.checkpoint's saves, and a resumed run's restore: it starts at the checkpoint's iteration.
  std::optional<Checkpoints> checkpoints;
  std::int64_t first = 0;
  const bool resumed = config.solver.checkpoint.resumes();
  if (config.solver.checkpoint.saves() || resumed) {
    checkpoints.emplace(comm, config, loop.engine(), loop.dense_model());
    if (resumed) {
      const auto restored = checkpoints->restore();
      first = restored.iteration;
      if (progress && comm.rank() == 0)
        *progress << progress_prefix << "resumed from " << restored.directory.string() << ": timed iterations "
                  << first + 1 << " to " << iterations << " (no warm-up)\n";
    }
  }
  // At an iteration boundary, outside the timed region: all ranks stop here, or none. After
  // `done` timed iterations (-1: in the warm-up) a checkpoint is saved first, when asked for.
  const auto stop_if_asked = [&](const std::string& where, std::int64_t done) {
    if (!stop_check) return;
    const int signal = stop_check();
    if (signal == 0) return;
    std::string message = "stopped by " + signal_name(signal) + " " + where;
    if (checkpoints && checkpoints->on_stop())
      message += done < 0 ? "; no checkpoint: the warm-up had not finished"
                          : "; checkpoint saved in " + checkpoints->save(done).string() +
                                " (resume it with run --resume-from)";
    throw StopRequested(message);
  };
  // A GPU run's phases are timed by CUDA events on its stream.
  embedding::StepRecorder recorder(loop.engine().make_phase_clock());
  const InjectedDelay delay = injected_delay();
  if (delay.seconds > 0) recorder.inject_delay(delay.phase, delay.seconds);
  const std::int64_t warmup = resumed ? 0 : config.solver.warmup_iter;  // a checkpoint follows the warm-up
  for (std::int64_t i = 0; i < warmup; ++i) {
    stop_if_asked("during the warm-up", -1);
    loop.step(-1 - i, recorder);
    if (eviction) eviction->end_step(iterations == 0 && i + 1 == warmup);
    if (i == 0 && delay.seconds > 0) require_phase(recorder, delay.phase);  // before any timed step
  }

  TrainingRun run;
  auto& m = run.measurements;
  const auto n_it = static_cast<std::size_t>(iterations - first);
  std::vector<double> rank_step(n_it), local_loss(n_it);
  std::vector<std::string> counter_names;
  const InjectedFault fault = injected_fault();
  Stopwatch elapsed;
  std::int64_t trained = iterations;  // fewer when an evaluation reaches the AUC target
  const bool scores_batches = loop.dense_model() && loop.dense_model()->has_loss_layer();
  for (std::int64_t it = first; it < iterations; ++it) {
    const auto uit = static_cast<std::size_t>(it - first);
    stop_if_asked("before iteration " + std::to_string(it), it);
    fault.strike_if_due(comm.rank(), it);
    if (dumps) dumps->mark_step(dumps->writing());
    local_loss[uit] = loop.step(it, recorder);
    // A diverged model (a loss of NaN or inf on any rank) ends the run, agreed, once: every step
    // after it would time arithmetic on non-finite rows. One small reduction, outside the step.
    if (config.solver.stop_on_non_finite_loss)
      comm::run_agreed(comm, [&] {
        if (!std::isfinite(local_loss[uit])) throw Error(non_finite_loss_message(it + 1, local_loss[uit], comm.rank()));
      });
    if (scores_batches) m.auc.push_back(loop.batch_auc());
    if (eviction) eviction->end_step(it + 1 == iterations);  // the clock of the step has stopped
    const auto counters = loop.counters(recorder);
    if (uit == 0) {
      if (warmup == 0 && delay.seconds > 0) require_phase(recorder, delay.phase);
      for (const auto& phase : recorder.phases()) {
        m.phase_names.push_back(phase.name);
        m.phase_meanings.emplace_back(phase.definition->meaning);
        m.timings[phase.name].assign(n_it, 0.0);
      }
      for (const auto& [name, value] : counters) {
        counter_names.push_back(name);
        m.counters[name].assign(n_it, 0);
      }
    }
    // Every step records the same phases and counters (the schemes' contract): checked, since a
    // report with misaligned columns would be silently wrong.
    EMBSCALE_EXPECTS(recorder.phases().size() == m.phase_names.size() && counters.size() == counter_names.size(),
                     "every step records the same phases and counters");
    double total = 0.0;
    for (std::size_t p = 0; p < recorder.phases().size(); ++p) {
      m.timings[m.phase_names[p]][uit] = recorder.phases()[p].seconds;
      total += recorder.phases()[p].seconds;
    }
    rank_step[uit] = total;
    for (std::size_t c = 0; c < counters.size(); ++c) m.counters[counter_names[c]][uit] = counters[c].second;
    if (dumps && dumps->due(it)) dumps->dump(it + 1);  // outside the timed region: its stall is its own
    if (checkpoints && checkpoints->due(it)) checkpoints->save(it + 1);

    // Progress: one small reduction every `display` iterations, outside the timed region.
    const std::int64_t display = config.solver.display;
    if (display > 0 && ((it + 1) % display == 0 || it + 1 == iterations)) {
      const double step = comm.allreduce(rank_step[uit], comm::ReduceOp::kMax);
      const double loss = comm.allreduce(local_loss[uit], comm::ReduceOp::kSum);
      if (progress && comm.rank() == 0)
        print_progress(*progress, progress_prefix, it + 1, iterations, step, loss, config.solver.batchsize,
                       elapsed.seconds());
    }
    const auto& evaluation = config.solver.evaluation;
    if (evaluator && (it + 1) % evaluation.interval == 0) {  // outside the timed region
      m.evaluations.push_back(evaluator->evaluate(it + 1));
      const EvaluationResult& r = m.evaluations.back();
      if (progress && comm.rank() == 0) print_evaluation(*progress, progress_prefix, r);
      if (evaluation.auc_threshold > 0 && r.auc >= evaluation.auc_threshold) {
        if (progress && comm.rank() == 0)
          *progress << progress_prefix << "AUC target " << evaluation.auc_threshold << " reached after iteration "
                    << it + 1 << ": training ends (HugeCTR's eval_metrics \"AUC:<threshold>\")\n";
        trained = it + 1;
        break;
      }
    }
  }
  if (trained < iterations) keep_iterations(m, rank_step, local_loss, static_cast<std::size_t>(trained - first));
  const auto n_run = static_cast<std::size_t>(trained - first);
  run.first_iteration = first;

  // Global per-iteration figures, after the loop.
  m.step_time.resize(n_run);
  m.loss.resize(n_run);
  comm.allreduce(std::span<const double>(rank_step), std::span<double>(m.step_time), comm::ReduceOp::kMax);
  comm.allreduce(std::span<const double>(local_loss), std::span<double>(m.loss), comm::ReduceOp::kSum);
  for (std::size_t p = 0; p < m.phase_names.size(); ++p) {
    const embedding::PhaseRecord& phase = recorder.phases()[p];
    if (*phase.definition->collective == '\0') continue;
    std::vector<double> bytes(n_run), seconds(n_run);
    for (std::size_t i = 0; i < n_run; ++i) {
      bytes[i] = static_cast<double>(m.counters[phase.name + ".bytes_sent"][i]);
      seconds[i] = m.timings[phase.name][i];
    }
    comm.allreduce(std::span<const double>(bytes), std::span<double>(bytes), comm::ReduceOp::kMax);
    comm.allreduce(std::span<const double>(seconds), std::span<double>(seconds), comm::ReduceOp::kMax);
    auto& algbw = m.bandwidth[phase.name + ".algbw"];
    auto& busbw = m.bandwidth[phase.name + ".busbw"];
    for (std::size_t i = 0; i < n_run; ++i) {
      algbw.push_back(seconds[i] > 0 ? bytes[i] / seconds[i] : 0.0);
      busbw.push_back(algbw.back() * bus_factor(phase.definition->collective, comm.size()));
    }
  }

  if (dumps) run.online = dumps->finish(n_run);
  if (checkpoints) run.checkpoints = checkpoints->records();
  run.summary = summarize_run(comm, config.solver.batchsize, m, true);
  if (eviction) run.eviction = eviction->finish(comm);
  return run;
}

}  // namespace embscale::run
