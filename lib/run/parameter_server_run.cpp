#include "run/parameter_server_run.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <memory>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "comm/failure.hpp"
#include "comm/message_channel.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"
#include "core/timer.hpp"
#include "embedding/engine.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "model/blas.hpp"
#include "model/dense_graph.hpp"
#include "model/dense_optimizer.hpp"
#include "ps/parameter_server.hpp"
#include "ps/ps_trainer.hpp"
#include "ps/shard_files.hpp"
#include "run/dense_objective.hpp"
#include "run/evaluation.hpp"
#include "run/run_hooks.hpp"

namespace embscale::run {
namespace {

// Every rank records every counter (the report's columns are the same on all ranks); a rank
// leaves the other role's at 0.
constexpr std::array<const char*, 2> kTrainerCounters = {"keys", "unique_keys"};
constexpr std::array<const char*, 11> kServerCounters = {"lookups", "keys_pushed",  "pulls_deferred", "staleness",
                                                         "hits",    "misses",       "inserts",        "evictions",
                                                         "refused", "not_admitted", "table_size"};

std::filesystem::path resolve(const config::Config& config, const std::string& directory) {
  const std::filesystem::path path(directory);
  return path.is_relative() ? config.directory / path : path;
}

// The trainers' phases, in the order one step records them: kTrainerPhases, with the dense
// model's forward, loss and backward (kDensePhases; its parameters are summed and updated on the
// servers) in place of the stand-in's "loss" when the config has dense layers.
std::vector<embedding::PhaseDefinition> trainer_phases(const config::Config& config) {
  std::vector<embedding::PhaseDefinition> phases;
  for (const auto& phase : ps::kTrainerPhases) {
    if (std::string_view(phase.name) != "loss" || config.dense_layers.empty()) phases.push_back(phase);
    else phases.insert(phases.end(), std::begin(kDensePhases), std::begin(kDensePhases) + 3);
  }
  return phases;
}

// One rank's part of the run: a trainer (client, step, the dense model and the evaluation) or a
// server (shard and serve loop).
class Role {
 public:
  // `channel`: the protocol's, opened on `world` by every rank. Collective over `world` (the
  // trainers' communicator is split from it).
  Role(comm::Communicator& world, std::unique_ptr<comm::MessageChannel> channel, const config::Config& config,
       const RunRoles& roles, std::span<const std::int64_t> slot_sizes)
      : world_(world), channel_(std::move(channel)), roles_(roles), server_(roles.is_server(world.rank())),
        group_(world.split(server_ ? 1 : 0, world.rank())),
        spec_(embedding::make_layer_spec(&world, config, 0, slot_sizes)) {
    const config::EmbeddingLayer& layer = config.embeddings.front();
    optimizer_ = embedding::make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size);
    spec_.optimizer = optimizer_.get();
    std::vector<int> trainers, servers;
    for (int r = 0; r < world.size(); ++r) (roles.is_server(r) ? servers : trainers).push_back(r);
    const auto& settings = *config.parameter_server;
    if (!config.dense_layers.empty()) {
      // The dense parameters live on the servers too: every rank builds the model from the
      // solver's seed (the same initial values everywhere); a server keeps its slice of them.
      model::set_blas_threads(1);
      dense_ = std::make_unique<DenseModel>(*group_, config);
    }
    const std::size_t dense_count = dense_ ? dense_->replicated_values().size() : 0;
    const ps::DenseSlice slice = ps::dense_slice(dense_count, roles.servers, server_ ? server_index() : 0);
    if (settings.one_sided_pulls) {
      // Every rank opens the windows (a trainer's empty); a server's rows live in its rows window.
      const auto words_per_row = static_cast<std::size_t>(layer.embedding_vec_size + optimizer_->state_width());
      windows_.emplace(*channel_, server_, static_cast<std::size_t>(owned_keys().rows()) * words_per_row,
                       server_ ? slice.count : 0);
    }
    if (!layer.storage.dynamic) {
      // Static storage: id % servers (every rank makes its store together, the trainers' empty).
      embedding::RowMemory memory;
      if (windows_) memory = [this](std::size_t) { return windows_->rows(); };
      shard_ = spec_.make_store(owned_keys(), layer.embedding_vec_size, 0, memory);
    }
    if (server_) {
      // Dynamic storage: the owned keys size nothing, ids come as they are pulled.
      if (!shard_) shard_ = spec_.make_store(embedding::OwnedKeys{}, layer.embedding_vec_size);
      ps::ServerOptions options{trainers, settings.synchronous, settings.staleness, {}, {}};
      if (dense_) {
        const std::span<const float> all = dense_->replicated_values();
        options.dense_values.assign(all.begin() + static_cast<std::ptrdiff_t>(slice.first),
                                    all.begin() + static_cast<std::ptrdiff_t>(slice.first + slice.count));
        dense_optimizer_ = std::make_unique<model::DenseOptimizer<float>>(config.optimizer);
        options.dense_update = [optimizer = dense_optimizer_.get()](std::span<float> values,
                                                                    std::span<const float> grads, std::int64_t step) {
          optimizer->apply(values, grads, step);
        };
        dense_.reset();  // the trainers run the model
      }
      server_loop_.emplace(*channel_, std::move(options), *shard_, *optimizer_);
      if (windows_)
        server_loop_->serve_one_sided(*windows_,
                                      static_cast<std::int64_t>(layer.embedding_vec_size + optimizer_->state_width()));
      return;
    }
    shard_.reset();  // a trainer holds no rows
    ps::TrainerObjective objective;
    ps::DenseParameters parameters;
    if (dense_) {
      dense_->hold_parameters_on_servers(roles.trainers);
      parameters = {dense_->replicated_values(), dense_->replicated_gradients()};
      objective = [this](const Batch& batch, std::span<const float> pooled, std::span<float> grad,
                         embedding::StepRecorder& recorder) {
        const std::span<const float> inputs[] = {pooled};
        const std::span<float> grads[] = {grad};
        return dense_->step(batch, inputs, grads, recorder);
      };
    }
    client_.emplace(*channel_, servers, layer.embedding_vec_size, parameters.values.size(), placement());
    if (windows_) {
      reader_.emplace(*windows_, servers, layer.embedding_vec_size, settings.synchronous ? 0 : settings.staleness);
      client_->read_one_sided(*reader_);
    }
    trainer_.emplace(*client_, layer.embedding_vec_size, spec_.mean(), config.solver.batchsize, std::move(objective),
                     parameters);
    if (config.solver.evaluation.runs())
      evaluator_.emplace(
          *group_, config,
          [this](std::int64_t, const Batch& batch) {
            return std::vector<std::span<const float>>{trainer_->evaluation_pooled(evaluated_step_, batch)};
          },
          *dense_);
  }

  int server_index() const noexcept { return world_.rank() - roles_.trainers; }
  // Dynamic tables by hash; static rows by id % servers (ps_messages.hpp: Placement).
  ps::Placement placement() const noexcept {
    return spec_.config->storage.dynamic ? ps::Placement::kHashed : ps::Placement::kStrided;
  }
  // A static shard's ids: id % servers == this server's index (none on a trainer).
  embedding::OwnedKeys owned_keys() const {
    embedding::OwnedKeys owned;
    if (server_ && !spec_.config->storage.dynamic) owned.add(server_index(), spec_.vocabulary(), roles_.servers);
    return owned;
  }

  bool server() const noexcept { return server_; }
  // The traffic of the protocol's messages so far (the world's collectives are counted apart).
  comm::CommStats& channel_stats() noexcept { return channel_->stats(); }

  // The shards of `directory` (saved by any number of servers), this server's part of them.
  void load(const std::filesystem::path& directory) {
    if (server_) ps::load_shard(*shard_, directory, server_index(), roles_.servers);
  }
  void save(const std::filesystem::path& directory) const {
    if (server_) ps::save_shard(*shard_, directory, server_index(), roles_.servers);
  }

  // Step `step` (1-based over warm-up and timed steps) of iteration `iteration` (the batch's
  // index: negative in the warm-up, as the engine's run numbers them). Fills `recorder` (trainers)
  // or `serve` (servers); returns this rank's share of the loss.
  double step(std::int64_t step, std::int64_t iteration, BatchSource& source, embedding::StepRecorder& recorder) {
    recorder.begin_step();
    if (server_) {
      serve_ = server_loop_->serve_through(step);
      recorder.end_step();
      return 0.0;
    }
    batch_ = source.next_batch(iteration, world_.rank(), roles_.trainers);
    const double loss = trainer_->step(step, batch_, recorder);
    recorder.end_step();
    return loss;
  }

  // The evaluation after step `step` (iteration `iteration` timed ones): the trainers read rows
  // without changing the tables and score the held-out samples among themselves; the servers serve
  // those reads (and any training request meanwhile) until every trainer is done reading. Only the
  // trainers' result is meaningful.
  EvaluationResult evaluate(std::int64_t step, std::int64_t iteration) {
    if (server_) {
      server_loop_->serve_evaluation(step);
      return {};
    }
    evaluated_step_ = step + 1;  // read what the next step's pull would
    EvaluationResult result = evaluator_->evaluate(iteration);
    client_->end_reads(step);
    return result;
  }

  // The traffic of the role's own communicator so far (the trainers' evaluation gathers).
  comm::CommStats& group_stats() noexcept { return group_->stats(); }

  // After the last step: trainers say they are done, servers take their word for it.
  void finish(std::int64_t last_step) {
    if (server_) server_loop_->serve();
    else client_->finish(last_step);
  }

  // This rank's counters of the last step, in kTrainerCounters then kServerCounters order.
  std::vector<std::int64_t> counters() {
    std::vector<std::int64_t> out(kTrainerCounters.size() + kServerCounters.size(), 0);
    if (!server_) {
      out[0] = static_cast<std::int64_t>(batch_.keys.size());
      out[1] = static_cast<std::int64_t>(trainer_->distinct_keys());
      if (reader_) {  // one-sided: the waits and the staleness are the trainers' to see
        const ps::OneSidedReader::Counters read = reader_->take_counters();
        out[kTrainerCounters.size() + 2] = read.deferred_reads;
        out[kTrainerCounters.size() + 3] = read.max_staleness;
      }
      return out;
    }
    const embedding::StoreCounters c = server_loop_->take_counters();
    // One-sided pulls pass no id through the server: the ids a step reads are those its pushes
    // bring back (a trainer pushes exactly the ids it pulled).
    const std::array<std::int64_t, kServerCounters.size()> values = {windows_ ? serve_.keys_pushed : serve_.keys_pulled,
                                                                     serve_.keys_pushed,
                                                                     serve_.deferred_pulls,
                                                                     serve_.max_staleness,
                                                                     c.hits,
                                                                     c.misses,
                                                                     c.inserts,
                                                                     c.evictions,
                                                                     c.refused,
                                                                     c.not_admitted,
                                                                     shard_->size()};
    std::copy(values.begin(), values.end(), out.begin() + static_cast<std::ptrdiff_t>(kTrainerCounters.size()));
    return out;
  }

  // The last step's server phases, in kServerPhases order (0 on trainers).
  std::array<double, 4> server_phases() const {
    if (!server_) return {0, 0, 0, 0};
    const double messages = std::max(0.0, serve_.busy_seconds - serve_.read_seconds - serve_.update_seconds);
    return {serve_.read_seconds, serve_.update_seconds, messages, serve_.idle_seconds};
  }

 private:
  comm::Communicator& world_;
  std::unique_ptr<comm::MessageChannel> channel_;  // the protocol's requests and answers
  RunRoles roles_;
  bool server_;
  std::unique_ptr<comm::Communicator> group_;  // the ranks of this rank's role
  embedding::LayerSpec spec_;
  std::unique_ptr<embedding::SparseOptimizer> optimizer_;
  std::unique_ptr<embedding::RowStore> shard_;
  std::optional<ps::ParameterServer> server_loop_;
  std::optional<ps::PullWindows> windows_;    // one-sided pulls (every rank; a trainer's empty)
  std::optional<ps::OneSidedReader> reader_;  // one-sided pulls, trainers
  std::optional<ps::PsClient> client_;
  std::optional<ps::PsTrainer> trainer_;
  std::unique_ptr<DenseModel> dense_;                              // trainers of a config with dense layers
  std::unique_ptr<model::DenseOptimizer<float>> dense_optimizer_;  // servers: their dense slice's
  std::optional<Evaluator> evaluator_;                             // trainers of a config with an evaluation
  std::int64_t evaluated_step_ = 0;                                // the step whose pull an evaluation's reads read as
  Batch batch_;
  ps::ServeStats serve_;
};

// The trainers' evaluations (rank 0 is a trainer) to every rank, so that every rank's report
// record holds them. Collective over `world`.
void share_evaluations(comm::Communicator& world, std::vector<EvaluationResult>& evaluations) {
  std::int64_t count = static_cast<std::int64_t>(evaluations.size());
  world.bcast(std::span<std::int64_t>(&count, 1), 0);
  constexpr std::size_t kFields = 6;
  std::vector<double> values(static_cast<std::size_t>(count) * kFields);
  if (world.rank() == 0)
    for (std::size_t i = 0; i < evaluations.size(); ++i) {
      const auto& e = evaluations[i];
      const double row[kFields] = {static_cast<double>(e.iteration), e.auc, e.auc_stderr, e.auc_ceiling, e.loss,
                                   static_cast<double>(e.samples)};
      std::copy(std::begin(row), std::end(row), values.begin() + static_cast<std::ptrdiff_t>(i * kFields));
    }
  world.bcast(std::span<double>(values), 0);
  evaluations.resize(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < evaluations.size(); ++i) {
    const double* row = values.data() + i * kFields;
    evaluations[i] = {static_cast<std::int64_t>(row[0]), row[1], row[2], row[3], row[4],
                      static_cast<std::int64_t>(row[5])};
  }
}

}  // namespace

RunRoles check_parameter_server_run(const config::Config& config, int ranks) {
  EMBSCALE_EXPECTS(config::runs_on_parameter_servers(config) && config.parameter_server,
                   "a parameter-server config (parse_config checks its section)");
  const auto& settings = *config.parameter_server;
  RunRoles roles{settings.trainers_for(ranks), settings.servers};
  const auto count = [](int n, const char* what) { return std::to_string(n) + " " + what + (n == 1 ? "" : "s"); };
  if (settings.trainers > 0 && ranks != settings.trainers + settings.servers)
    throw InputError("parameter_server: this config runs " + count(settings.trainers, "trainer") + " and " +
                     count(settings.servers, "server") + ", " + std::to_string(settings.trainers + settings.servers) +
                     " ranks (mpiexec -n " + std::to_string(settings.trainers + settings.servers) + "); this run has " +
                     std::to_string(ranks));
  if (config.solver.evaluation.auc_threshold > 0)
    throw InputError(config.origin +
                     ": solver.eval_metrics: \"AUC:<t>\" ends training when reached, which a parameter-server run "
                     "does not (its servers serve until the trainers' last step); use \"AUC\"");
  if (roles.trainers < 1)
    throw InputError("parameter_server.servers: " + count(settings.servers, "server") + " leave no trainer among " +
                     std::to_string(ranks) + " ranks; a run needs at least " + std::to_string(settings.servers + 1));
  if (config.solver.batchsize < roles.trainers)
    throw InputError("solver.batchsize: expected at least one sample per trainer (>= " +
                     std::to_string(roles.trainers) + "), got " + std::to_string(config.solver.batchsize));
  model::check_dense_graph(config, roles.trainers);  // the dense part runs on the trainers
  for (const auto& node : config.dense_layers)
    if (node.json.value("partition_dim", 0) == 1)
      throw InputError(node.path +
                       ".partition_dim: the parameter servers hold the dense parameters whole (one slice each), "
                       "and a feature-parallel layer's are split over ranks; use partition_dim 0 with the "
                       "parameter server");
  check_evaluation(config);
  return roles;
}

TrainingRun run_parameter_server(comm::Communicator& world, const config::Config& config, BatchSource& source,
                                 std::ostream* progress, const StopCheck& stop_check,
                                 const std::string& progress_prefix) {
  const RunRoles roles = check_parameter_server_run(config, world.size());
  check_source_holds(config, source);
  const auto& settings = *config.parameter_server;
  std::optional<Role> built;
  // Opened in an agreement of its own, before the role's: opening is collective, and a transport
  // that cannot start fails on every rank alike (UcxMessageChannel agrees on it first).
  std::unique_ptr<comm::MessageChannel> channel;
  comm::run_agreed(world, [&] {
    channel = comm::open_message_channel(
        world, settings.ucx_transport ? comm::ChannelTransport::kUcx : comm::ChannelTransport::kMpi);
  });
  const std::string transport = comm::broadcast_strings(world, {channel->transport_details()})[0];
  comm::run_agreed(world, [&] { built.emplace(world, std::move(channel), config, roles, source.slot_sizes()); });
  Role& role = *built;
  if (!settings.load_directory.empty())
    comm::run_agreed(world, [&] { role.load(resolve(config, settings.load_directory)); });

  const auto stop_if_asked = [&](const std::string& where) {
    if (!stop_check) return;
    if (const int signal = stop_check()) throw StopRequested("stopped by " + signal_name(signal) + " " + where);
  };
  const InjectedFault fault = injected_fault();
  const InjectedDelay delay = injected_delay();
  embedding::StepRecorder recorder;
  if (delay.seconds > 0) recorder.inject_delay(delay.phase, delay.seconds);
  comm::run_agreed(world, [&] {
    const auto phases = trainer_phases(config);
    if (delay.seconds > 0 && !embedding::find_phase(phases, delay.phase)) {
      std::string names;
      for (const auto& phase : phases) names += (names.empty() ? "" : ", ") + std::string(phase.name);
      throw InputError("EMBSCALE_INJECT_DELAY: a parameter-server run delays its trainers' phases (" + names +
                       "); it has no phase \"" + delay.phase + "\"");
    }
  });

  TrainingRun run;
  run.transport = transport;
  auto& m = run.measurements;
  const std::int64_t warmup = config.solver.warmup_iter, iterations = config.solver.max_iter;
  const auto n_it = static_cast<std::size_t>(iterations);
  for (const auto& phase : trainer_phases(config))
    m.phase_names.emplace_back(phase.name), m.phase_meanings.emplace_back(phase.meaning);
  for (const auto& phase : kServerPhases)
    m.phase_names.emplace_back(phase.name), m.phase_meanings.emplace_back(phase.meaning);
  for (const auto& name : m.phase_names) m.timings[name].assign(n_it, 0.0);
  std::vector<std::string> counter_names = {"bytes_sent", "bytes_recv"};
  counter_names.insert(counter_names.end(), kTrainerCounters.begin(), kTrainerCounters.end());
  counter_names.insert(counter_names.end(), kServerCounters.begin(), kServerCounters.end());
  for (const auto& name : counter_names) m.counters[name].assign(n_it, 0);

  const auto& evaluation = config.solver.evaluation;
  // Ranks meet every `window` steps: a trainer can then run ahead as far as the staleness allows.
  const std::int64_t window = settings.synchronous ? 1 : settings.staleness + 1;
  std::int64_t checked_through = 0;  // timed iterations below it had finite losses on every rank
  std::vector<double> rank_step(n_it, 0.0), local_loss(n_it, 0.0);
  std::int64_t last_progress = 0;
  Stopwatch elapsed;
  for (std::int64_t s = 1; s <= warmup + iterations; ++s) {
    const bool timed = s > warmup;
    const std::int64_t it = s - warmup - 1;  // the timed iteration (negative in the warm-up)
    if ((timed ? it : s - 1) % window == 0)
      stop_if_asked(timed ? "before iteration " + std::to_string(it) : std::string("during the warm-up"));
    if (timed) fault.strike_if_due(world.rank(), it);
    const auto traffic = [&] {  // the collectives' and the protocol's
      comm::OpStats sum = world.stats().total();
      for (const comm::OpStats& more : {role.channel_stats().total(), role.group_stats().total()}) {
        sum.bytes_sent += more.bytes_sent;
        sum.bytes_recv += more.bytes_recv;
      }
      return sum;
    };
    const auto before = traffic();
    const double loss = role.step(s, timed ? it : -s, source, recorder);
    if (!timed) continue;
    const auto after = traffic();
    const auto uit = static_cast<std::size_t>(it);
    local_loss[uit] = loss;
    if (!role.server())
      for (const auto& phase : recorder.phases()) {
        m.timings[phase.name][uit] = phase.seconds;
        rank_step[uit] += phase.seconds;
      }
    const auto server_seconds = role.server_phases();
    for (std::size_t p = 0; p < server_seconds.size(); ++p) m.timings[kServerPhases[p].name][uit] = server_seconds[p];
    m.counters["bytes_sent"][uit] = static_cast<std::int64_t>(after.bytes_sent - before.bytes_sent);
    m.counters["bytes_recv"][uit] = static_cast<std::int64_t>(after.bytes_recv - before.bytes_recv);
    const auto values = role.counters();
    for (std::size_t c = 0; c < values.size(); ++c) m.counters[counter_names[c + 2]][uit] = values[c];

    // An evaluation, outside the timed step (every rank takes part: the servers serve its reads).
    if (evaluation.runs() && (it + 1) % evaluation.interval == 0) {
      EvaluationResult r = role.evaluate(s, it + 1);
      if (!role.server()) {
        if (progress && world.rank() == 0) print_evaluation(*progress, progress_prefix, r);
        m.evaluations.push_back(r);
      }
    }

    // A diverged model ends the run, agreed, at the boundary after it (ranks meet only there): the
    // iterations since the last boundary are checked on every rank, as the engine's loop does.
    const bool at_boundary = (it + 1) % window == 0 || it + 1 == iterations;
    if (at_boundary && config.solver.stop_on_non_finite_loss) {
      comm::run_agreed(world, [&] {
        for (std::int64_t i = checked_through; i <= it; ++i)
          if (!std::isfinite(local_loss[static_cast<std::size_t>(i)]))
            throw Error(non_finite_loss_message(i + 1, local_loss[static_cast<std::size_t>(i)], world.rank()));
      });
      checked_through = it + 1;
    }

    // Progress at a boundary (or the end) after a multiple of `display`: a reduction outside any step.
    const std::int64_t display = config.solver.display;
    if (display > 0 && at_boundary && (it + 1) / display > last_progress / display) {
      last_progress = it + 1;
      const double step = world.allreduce(rank_step[uit], comm::ReduceOp::kMax);
      const double total_loss = world.allreduce(local_loss[uit], comm::ReduceOp::kSum);
      if (progress && world.rank() == 0)
        print_progress(*progress, progress_prefix, it + 1, iterations, step, total_loss, config.solver.batchsize,
                       elapsed.seconds());
    }
  }
  role.finish(warmup + iterations);
  if (!settings.save_directory.empty())
    comm::run_agreed(world, [&] { role.save(resolve(config, settings.save_directory)); });

  share_evaluations(world, m.evaluations);
  // A step's time: the slowest trainer's (servers give 0); the loss: the trainers' shares summed.
  m.step_time.resize(n_it);
  m.loss.resize(n_it);
  world.allreduce(std::span<const double>(rank_step), std::span<double>(m.step_time), comm::ReduceOp::kMax);
  world.allreduce(std::span<const double>(local_loss), std::span<double>(m.loss), comm::ReduceOp::kSum);
  run.summary = summarize_run(world, config.solver.batchsize, m, role.server());
  return run;
}

}  // namespace embscale::run
