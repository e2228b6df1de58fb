// embscale_peers_bench: embscale's single-rank pooled lookup (the layer engine: the scheme's
// route -> lookup -> pool forward, and its backward with the sparse optimizer) timed on the batches
// its own generator makes, which it can also write for FBGEMM and torch (peer_batches.hpp;
// bench/peers/README.md has the comparison and bench/peers/run drives it).
//
//   embscale_peers_bench --config bench/peers/peers.json [--set FIELD=VALUE ...]
//       [--mode forward|sgd|rowwise_adagrad] [--device host|gpu] [--batches 8] [--repetitions 10]
//       [--write-batches FILE]
//
// Work: `batches` batches of the config (iterations 0 .. batches-1 of its Data layer, generated
// before any timing) go through one EmbeddingEngine on one rank. forward: the layer in evaluation
// mode (storage.training false: forward only); sgd, rowwise_adagrad: forward and backward with that
// optimizer (lr 0.1; row-wise AdaGrad eps 0.1, as FBGEMM's benchmark). One untimed pass over the
// batches, then `repetitions` timed passes. A batch's time is the engine step's wall time less its
// loss phase (the stand-in dense model, which FBGEMM's and torch's timings do not have): what is
// left is the embedding layer's own forward (and backward with the update). On the GPU a batch's
// time is its phases' (CUDA events from the step's start to its end, host gaps included), without
// the batch's upload before the step, as torch's batches are on the GPU before its timing: the
// upload and the host's work outside the phases are "outside_phases".
// Check: in forward mode the untimed pass's first batch is pooled again from the store's rows
// (RowStore::row, bag by bag in key order) and must equal the engine's output.
// Threads: OpenMP's (OMP_NUM_THREADS), given to the engine (EngineOptions::threads: its pooling
// and the static table's update), reported as "threads".
// --device gpu: the layer on this rank's GPU (the engine's GPU step, lib/run/run_devices.hpp: the
// GPU library, the first GPU, NCCL over the one rank); its phases are timed by CUDA events and the
// step ends with the wait for its last phase (StepRecorder::end_step), so it is the device's time.
// Output: one JSON object on stdout: per repetition the mean seconds per batch, and per phase the
// median over repetitions of its mean seconds per batch ("outside_phases": the wall time no phase
// covers, such as a device layer's batch upload, which is in per_batch_s). Exit codes: 0 ok, 1 failure (the check),
// 2 bad input.
#include <mpi.h>
#include <omp.h>
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <map>
#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "embedding/engine.hpp"
#include "embedding/step_recorder.hpp"
#include "peer_batches.hpp"
#include "run/device_check.hpp"
#include "run/run_devices.hpp"
#include "workloads/batch_source_factory.hpp"

namespace {

using namespace embscale;
using embscale::bench::write_peer_batches;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The layer's optimizer for `mode` (FBGEMM's benchmark: lr 0.1, eps 0.1), or evaluation mode.
void set_mode(config::Config& config, const std::string& mode) {
  for (auto& layer : config.embeddings) {
    if (mode == "forward") {
      layer.storage.table.training = false;
      continue;
    }
    layer.optimizer = config::Optimizer{};
    layer.optimizer.learning_rate = 0.1;
    layer.optimizer.type = mode == "sgd" ? config::OptimizerType::kSGD : config::OptimizerType::kRowWiseAdaGrad;
    if (mode == "rowwise_adagrad") layer.optimizer.epsilon = 0.1;
  }
}

// The largest |engine - direct| over the first batch's pooled values, the direct sum taken from
// the store's rows bag by bag in key order (the engine's order on one rank).
double pooled_mismatch(embedding::EmbeddingEngine& engine, const Batch& batch) {
  const auto dim = static_cast<std::size_t>(engine.spec(0).dim());
  const std::vector<float> pooled = engine.pooled_on_host(0);
  std::vector<float> row(dim), sum(dim);
  double worst = 0;
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    std::fill(sum.begin(), sum.end(), 0.0f);
    for (const Key key : batch.bag(b)) {
      if (!engine.store(0).row(key, row)) throw Error("check: key " + std::to_string(key) + " has no row");
      for (std::size_t d = 0; d < dim; ++d) sum[d] += row[d];
    }
    for (std::size_t d = 0; d < dim; ++d)
      worst = std::max(worst, static_cast<double>(std::fabs(sum[d] - pooled[static_cast<std::size_t>(b) * dim + d])));
  }
  return worst;
}

int bench_main(int argc, char** argv) {
  CLI::App app{"embscale's single-rank pooled lookup, timed on its own generated batches (bench/peers)"};
  std::string config_path, mode = "forward", write_path, device = "host";
  std::vector<std::string> settings;
  std::int64_t batches = 8, repetitions = 10;
  app.add_option("--config", config_path, "the benchmark's config (bench/peers/peers.json)")->required();
  app.add_option("--set", settings, "FIELD=VALUE, as `embscale run --set`");
  app.add_option("--mode", mode, "forward, sgd or rowwise_adagrad")
      ->check(CLI::IsMember({"forward", "sgd", "rowwise_adagrad"}));
  app.add_option("--device", device, "host, or gpu: the engine's GPU step")->check(CLI::IsMember({"host", "gpu"}));
  app.add_option("--batches", batches, "distinct batches, generated before timing")->check(CLI::PositiveNumber);
  app.add_option("--repetitions", repetitions, "timed passes over the batches")->check(CLI::PositiveNumber);
  app.add_option("--write-batches", write_path, "write the batches for peers.py (FBGEMM's layout) and exit");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }

  comm::MpiCommunicator world(MPI_COMM_WORLD);
  if (world.size() != 1) throw InputError("embscale_peers_bench runs on one rank, got " + std::to_string(world.size()));
  config::Config config =
      config::parse_config_with_settings(config::read_config_text(config_path), config_path, settings);
  config::resolve_batch_for_ranks(config, 1);
  if (config.embeddings.size() != 1) throw InputError(config_path + ": layers: expected one embedding layer");
  set_mode(config, mode);
  if (device == "gpu") config.solver.device = config::Device::kGpu;
  for (auto& layer : config.embeddings)
    if (device == "gpu") layer.device = config::Device::kGpu;
  const auto source = workloads::make_batch_source(config);
  std::vector<Batch> data;
  for (std::int64_t i = 0; i < batches; ++i) data.push_back(source->next_batch(i, 0, 1));

  const auto& sizes = source->slot_sizes();
  if (!write_path.empty()) {
    if (std::adjacent_find(sizes.begin(), sizes.end(), std::not_equal_to<>()) != sizes.end())
      throw InputError(config_path + ": slot_size_array: --write-batches needs equal slot sizes (FBGEMM's E)");
    write_peer_batches(write_path, data, sizes.front(), config.embeddings.front().embedding_vec_size);
    return 0;
  }

  std::unique_ptr<run::RunDevices> devices;
  embedding::EngineOptions options{.threads = omp_get_max_threads()};
  if (device == "gpu") {
    devices = run::RunDevices::open(world, run::place_on_hosts(world), config);
    options = devices->engine_options();
  }
  embedding::EmbeddingEngine engine(devices ? devices->step_communicator() : world, config, sizes, options);
  embedding::StepRecorder recorder(engine.make_phase_clock());
  const auto loss_seconds = [&] {
    double s = 0;
    for (const auto& phase : recorder.phases())
      if (phase.name == embedding::kLossPhase.name) s += phase.seconds;
    return s;
  };
  for (std::size_t i = 0; i < data.size(); ++i) {
    engine.step(data[i], recorder);
    if (i == 0 && mode == "forward") {
      const double worst = pooled_mismatch(engine, data[0]);
      if (worst > 1e-4) {
        std::fprintf(stderr, "embscale_peers_bench: check failed: pooled output differs from the rows' sums by %g\n",
                     worst);
        return 1;
      }
    }
  }
  std::vector<double> per_batch;
  std::map<std::string, std::vector<double>> phase_runs;
  for (std::int64_t r = 0; r < repetitions; ++r) {
    double total = 0;
    std::map<std::string, double> phases;
    for (const auto& batch : data) {
      Stopwatch watch;
      engine.step(batch, recorder);
      const double wall = watch.seconds();
      double in_phases = 0;
      for (const auto& phase : recorder.phases()) {
        phases[phase.name] += phase.seconds;
        in_phases += phase.seconds;
      }
      // On the GPU the batch's upload comes first, before the step's clock (the data reader's work,
      // which torch's timing leaves out too: its batches are on the GPU before it starts): the
      // step is its phases, from the first event to the last; the rest is "outside_phases".
      total += (device == "gpu" ? in_phases : wall) - loss_seconds();
      phases["outside_phases"] += wall - in_phases;
    }
    per_batch.push_back(total / static_cast<double>(batches));
    for (const auto& [name, seconds] : phases) phase_runs[name].push_back(seconds / static_cast<double>(batches));
  }
  nlohmann::json phases_json = nlohmann::json::object();
  for (const auto& [name, runs] : phase_runs) phases_json[name] = median(runs);
  std::int64_t keys = 0;
  for (const auto& batch : data) keys += static_cast<std::int64_t>(batch.keys.size());
  const nlohmann::json out = {{"impl", "embscale"},
                              {"mode", mode},
                              {"device", device},
                              {"threads", omp_get_max_threads()},
                              {"scheme", engine.entry(0).name},
                              {"batches", batches},
                              {"keys_per_batch", static_cast<double>(keys) / static_cast<double>(batches)},
                              {"per_batch_s", per_batch},
                              {"phases_s", phases_json}};
  std::cout << out.dump() << "\n";
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  int code = 0;
  try {
    code = bench_main(argc, argv);
  } catch (const InputError& e) {
    std::cerr << "embscale_peers_bench: " << e.what() << "\n";
    code = 2;
  } catch (const std::exception& e) {
    std::cerr << "embscale_peers_bench: " << e.what() << "\n";
    code = 1;
  }
  MPI_Finalize();
  return code;
}
