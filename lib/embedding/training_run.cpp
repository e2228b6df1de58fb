#include "embedding/training_run.hpp"

#include <algorithm>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "core/timer.hpp"
#include "embedding/all2all_dense.hpp"
#include "embedding/initializer.hpp"
#include "embedding/regression_objective.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::embedding {
namespace {

double quantile(std::vector<double> values, double q) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const double pos = q * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (pos - static_cast<double>(lo)) * (values[hi] - values[lo]);
}

struct Layer {
  std::string prefix;  // "" for a single layer, else "<name>." before its phase names
  std::unique_ptr<All2AllDenseEmbedding> embedding;
  std::vector<float> pooled;
  std::vector<float> grad;
};

constexpr PhaseDefinition kLossPhase{"loss", "stand-in dense model: a regression loss and its gradient per bag"};
constexpr std::array<const char*, 5> kCounterNames = {"keys", "unique_keys", "lookups", "bytes_sent", "bytes_recv"};

class Loop {
 public:
  Loop(comm::Communicator& comm, const config::Config& config)
      : comm_(comm), config_(config),
        generator_(config.data, config.solver.seed, config.solver.batchsize) {
    for (std::size_t i = 0; i < config.embeddings.size(); ++i) {
      const auto& spec = config.embeddings[i];
      Layer layer;
      layer.prefix = config.embeddings.size() > 1 ? spec.name + "." : "";
      layer.embedding = std::make_unique<All2AllDenseEmbedding>(
          comm, spec, generator_.total_vocabulary(), table_seed(config.solver.seed, i));
      layers_.push_back(std::move(layer));
    }
  }

  // One forward + backward over all layers. Returns this rank's loss share.
  double step(std::int64_t iteration, PhaseClock& clock, std::vector<std::int64_t>& counters) {
    const Batch batch = generator_.generate(iteration, comm_.rank(), comm_.size());
    const auto before = comm_.stats().total();
    clock.clear();
    clock.start();
    double loss = 0.0;
    for (auto& layer : layers_) {
      const auto n = static_cast<std::size_t>(batch.num_bags()) * static_cast<std::size_t>(layer.embedding->dim());
      layer.pooled.resize(n);
      layer.grad.resize(n);
      layer.embedding->forward(batch, layer.pooled, clock);
      loss += regression_loss_and_gradient(batch, layer.pooled, layer.embedding->dim(),
                                           config_.solver.batchsize, layer.grad);
      clock.lap(kLossPhase.name);
      layer.embedding->backward(batch, layer.grad, clock);
    }
    const auto after = comm_.stats().total();
    counters.assign(kCounterNames.size(), 0);
    for (const auto& layer : layers_) {
      counters[0] += layer.embedding->counters().keys;
      counters[1] += layer.embedding->counters().unique_keys;
      counters[2] += layer.embedding->counters().lookups;
    }
    counters[3] = static_cast<std::int64_t>(after.bytes_sent - before.bytes_sent);
    counters[4] = static_cast<std::int64_t>(after.bytes_recv - before.bytes_recv);
    return loss;
  }

  // Phase names as recorded by the clock, qualified by layer when there are several.
  std::vector<std::string> qualified_names(const PhaseClock& clock) const {
    std::vector<std::string> names;
    const std::size_t per_layer = clock.phases().size() / layers_.size();
    for (std::size_t i = 0; i < clock.phases().size(); ++i)
      names.push_back(layers_[i / per_layer].prefix + clock.phases()[i].first);
    return names;
  }

  // What each recorded phase covers, in the clock's order: from the scheme of the layer that
  // recorded it, or the loop's own loss phase.
  std::vector<std::string> meanings(const PhaseClock& clock) const {
    std::vector<std::string> out;
    const std::size_t per_layer = clock.phases().size() / layers_.size();
    for (std::size_t i = 0; i < clock.phases().size(); ++i) {
      const std::string& name = clock.phases()[i].first;
      const char* meaning = name == kLossPhase.name ? kLossPhase.meaning : layers_[i / per_layer].embedding->phase_meaning(name);
      EMBSCALE_EXPECTS(meaning != nullptr, "every phase a scheme records is one of its PhaseDefinitions");
      out.emplace_back(meaning);
    }
    return out;
  }

 private:
  comm::Communicator& comm_;
  const config::Config& config_;
  workloads::SyntheticGenerator generator_;
  std::vector<Layer> layers_;
};

// Fault injection for the tests of the failure path: EMBSCALE_FAULT_INJECT="RANK:ITERATION"
// makes that rank throw at the start of that timed iteration, as a real local failure would;
// "RANK:ITERATION:kill" makes it raise SIGKILL on itself there instead, as the OOM killer or a
// crashed node would: no handler runs, nothing is cleaned up by that process.
struct InjectedFault {
  int rank = -1;
  std::int64_t iteration = -1;
  bool kill = false;

  void strike_if_due(int this_rank, std::int64_t it) const {
    if (rank != this_rank || iteration != it) return;
    if (kill) std::raise(SIGKILL);
    throw Error("injected fault at iteration " + std::to_string(it) + " (EMBSCALE_FAULT_INJECT)");
  }
};

InjectedFault injected_fault() {
  InjectedFault fault;
  if (const char* spec = std::getenv("EMBSCALE_FAULT_INJECT")) {
    long long rank = -1, iteration = -1;
    int end = 0;
    const bool parsed = std::sscanf(spec, "%lld:%lld%n", &rank, &iteration, &end) == 2;
    const std::string action = parsed ? spec + end : "";
    if (!parsed || (action != "" && action != ":kill"))
      throw InputError(std::string("EMBSCALE_FAULT_INJECT: expected RANK:ITERATION or RANK:ITERATION:kill, got \"") +
                       spec + "\"");
    fault = {static_cast<int>(rank), iteration, action == ":kill"};
  }
  return fault;
}

// Test hook for measuring compare's detection rate: EMBSCALE_INJECT_DELAY="PHASE:SECONDS" makes
// every rank do SECONDS of CPU work more inside each PHASE (a phase name the run's layers record,
// such as update; PhaseClock::inject_delay). Unset: no delay.
struct InjectedDelay {
  std::string phase;
  double seconds = 0;
};

InjectedDelay injected_delay() {
  InjectedDelay delay;
  if (const char* spec = std::getenv("EMBSCALE_INJECT_DELAY")) {
    const std::string text = spec;
    const auto colon = text.rfind(':');
    char* end = nullptr;
    const double seconds = colon == std::string::npos ? -1.0 : std::strtod(text.c_str() + colon + 1, &end);
    if (colon == std::string::npos || colon == 0 || end == text.c_str() + colon + 1 || *end != '\0' ||
        !(seconds >= 0 && seconds <= 10))
      throw InputError("EMBSCALE_INJECT_DELAY: expected PHASE:SECONDS (a phase name, 0 to 10 seconds), got \"" + text +
                       "\"");
    delay = {text.substr(0, colon), seconds};
  }
  return delay;
}

void require_phase(const PhaseClock& clock, const std::string& phase) {
  std::string names;
  for (const auto& [name, seconds] : clock.phases()) {
    if (name == phase) return;
    names += (names.empty() ? "" : ", ") + name;
  }
  throw InputError("EMBSCALE_INJECT_DELAY: this run has no phase \"" + phase + "\" (its phases: " + names + ")");
}

void print_progress(std::ostream& out, const std::string& prefix, std::int64_t done, std::int64_t total, double step_s, double loss,
                    std::int64_t batch, double elapsed_s) {
  char line[256];
  const double eta = elapsed_s / static_cast<double>(done) * static_cast<double>(total - done);
  std::snprintf(line, sizeof line, "%siteration %lld/%lld  step %.3f ms  %.3g samples/s  loss %.6g  ETA %.1f s",
                prefix.c_str(), static_cast<long long>(done), static_cast<long long>(total), step_s * 1e3,
                static_cast<double>(batch) / step_s, loss, eta);
  out << line << std::endl;
}

}  // namespace

void check_run_environment() {
  injected_fault();
  injected_delay();
}

void check_config_for_ranks(const config::Config& config, int ranks) {
  EMBSCALE_EXPECTS(config.solver.batchsize >= 1, "a per-rank batch is resolved (config::resolve_batch_for_ranks) first");
  if (config.solver.batchsize < ranks)
    throw InputError("solver.batchsize: expected at least one sample per rank (>= " + std::to_string(ranks) +
                     "), got " + std::to_string(config.solver.batchsize));
  std::int64_t vocabulary = 0;
  for (const auto size : config.data.slot_size_array) vocabulary += size;
  const std::int64_t rows = ModuloSharding{ranks}.rows_of(0, vocabulary);  // rank 0 owns the most
  for (const auto& layer : config.embeddings)
    if (layer.max_vocabulary_size_per_gpu < rows)
      throw InputError("layers[" + layer.name + "].sparse_embedding_hparam.max_vocabulary_size_per_gpu: expected at least " +
                       std::to_string(rows) + " (vocabulary " + std::to_string(vocabulary) + " over " +
                       std::to_string(ranks) + " ranks), got " + std::to_string(layer.max_vocabulary_size_per_gpu));
}

TrainingRun run_training(comm::Communicator& comm, const config::Config& config, std::ostream* progress,
                         const StopCheck& stop_check, const std::string& progress_prefix) {
  check_config_for_ranks(config, comm.size());
  // At an iteration boundary, outside the timed region: all ranks stop here, or none.
  const auto stop_if_asked = [&](const std::string& where) {
    if (!stop_check) return;
    if (const int signal = stop_check()) throw StopRequested("stopped by " + signal_name(signal) + " " + where);
  };
  Loop loop(comm, config);
  PhaseClock clock;
  const InjectedDelay delay = injected_delay();
  if (delay.seconds > 0) clock.inject_delay(delay.phase, delay.seconds);
  std::vector<std::int64_t> counters;
  for (std::int64_t i = 0; i < config.solver.warmup_iter; ++i) {
    stop_if_asked("during the warm-up");
    loop.step(-1 - i, clock, counters);
    if (i == 0 && delay.seconds > 0) require_phase(clock, delay.phase);  // before any timed step
  }

  const std::int64_t iterations = config.solver.max_iter;
  TrainingRun run;
  auto& m = run.measurements;
  std::vector<double> rank_step(static_cast<std::size_t>(iterations));
  std::vector<double> local_loss(static_cast<std::size_t>(iterations));
  const InjectedFault fault = injected_fault();
  Stopwatch elapsed;
  for (std::int64_t it = 0; it < iterations; ++it) {
    const auto uit = static_cast<std::size_t>(it);
    stop_if_asked("before iteration " + std::to_string(it));
    fault.strike_if_due(comm.rank(), it);
    local_loss[uit] = loop.step(it, clock, counters);
    if (it == 0) {
      if (config.solver.warmup_iter == 0 && delay.seconds > 0) require_phase(clock, delay.phase);
      m.phase_names = loop.qualified_names(clock);
      m.phase_meanings = loop.meanings(clock);
      for (const auto& name : m.phase_names) m.timings[name].assign(static_cast<std::size_t>(iterations), 0.0);
      for (const auto* name : kCounterNames) m.counters[name].assign(static_cast<std::size_t>(iterations), 0);
    }
    double total = 0.0;
    for (std::size_t p = 0; p < clock.phases().size(); ++p) {
      m.timings[m.phase_names[p]][uit] = clock.phases()[p].second;
      total += clock.phases()[p].second;
    }
    rank_step[uit] = total;
    for (std::size_t c = 0; c < kCounterNames.size(); ++c) m.counters[kCounterNames[c]][uit] = counters[c];

    // Progress: one small reduction every `display` iterations, outside the timed region.
    const std::int64_t display = config.solver.display;
    if (display > 0 && ((it + 1) % display == 0 || it + 1 == iterations)) {
      const double step = comm.allreduce(rank_step[uit], comm::ReduceOp::kMax);
      const double loss = comm.allreduce(local_loss[uit], comm::ReduceOp::kSum);
      if (progress && comm.rank() == 0)
        print_progress(*progress, progress_prefix, it + 1, iterations, step, loss, config.solver.batchsize, elapsed.seconds());
    }
  }

  // Global per-iteration figures, after the loop.
  m.step_time.resize(rank_step.size());
  m.loss.resize(local_loss.size());
  comm.allreduce(std::span<const double>(rank_step), std::span<double>(m.step_time), comm::ReduceOp::kMax);
  comm.allreduce(std::span<const double>(local_loss), std::span<double>(m.loss), comm::ReduceOp::kSum);

  auto& s = run.summary;
  s.iterations = iterations;
  s.step_time_median_s = quantile(m.step_time, 0.5);
  s.step_time_p95_s = quantile(m.step_time, 0.95);
  double local_keys = 0, local_sent = 0, local_lookups = 0;
  for (std::size_t i = 0; i < static_cast<std::size_t>(iterations); ++i) {
    local_keys += static_cast<double>(m.counters["keys"][i]);
    local_sent += static_cast<double>(m.counters["bytes_sent"][i]);
    local_lookups += static_cast<double>(m.counters["lookups"][i]);
  }
  const double n = static_cast<double>(iterations);
  const double keys_per_step = comm.allreduce(local_keys, comm::ReduceOp::kSum) / n;
  s.bytes_sent_per_step = comm.allreduce(local_sent, comm::ReduceOp::kSum) / n;
  const double max_lookups = comm.allreduce(local_lookups, comm::ReduceOp::kMax);
  const double mean_lookups = comm.allreduce(local_lookups, comm::ReduceOp::kSum) / comm.size();
  s.load_imbalance = mean_lookups > 0 ? max_lookups / mean_lookups : 1.0;
  if (s.step_time_median_s > 0) {
    s.throughput_samples_per_s = static_cast<double>(config.solver.batchsize) / s.step_time_median_s;
    s.throughput_keys_per_s = keys_per_step / s.step_time_median_s;
  }
  s.final_loss = m.loss.empty() ? 0.0 : m.loss.back();
  return run;
}

}  // namespace embscale::embedding
