#include "run/online_dumps.hpp"

#include <algorithm>
#include <cstdio>
#include <system_error>

#include <nlohmann/json.hpp>

#include "comm/failure.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "kv/score_rules.hpp"
#include "kv/table_file.hpp"

namespace embscale::run {
namespace {

constexpr const char* kField = "solver.incremental_dump";

std::filesystem::path resolved_root(const config::Config& config) {
  const std::filesystem::path directory = config.solver.incremental_dump.directory;
  return directory.is_absolute() ? directory : config.directory / directory;
}

std::string layer_file_name(const std::string& layer, int rank, int ranks) {
  return layer + ".rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks) + ".kv";
}

// Max over ranks of one value.
double slowest(comm::Communicator& comm, double value) { return comm.allreduce(value, comm::ReduceOp::kMax); }

}  // namespace

void check_incremental_dumps(const config::Config& config) {
  const auto& dump = config.solver.incremental_dump;
  if (!dump.runs()) return;
  if (config::runs_on_parameter_servers(config))
    throw InputError(std::string(kField) +
                     ": a parameter-server run's shards are saved by its servers (parameter_server.save_directory); "
                     "incremental dumps are the engine's runs'");
  bool any = false;
  for (const auto& layer : config.embeddings) {
    if (!layer.storage.dynamic) continue;
    if (layer.storage.two_tier())
      throw InputError(std::string(kField) + ": layer " + layer.name +
                       " keeps its rows in two tiers (caching or global_hbm_for_values), whose scores are not on one "
                       "clock, so it has no incremental dump; give it one tier or remove the dumps");
    any = true;
  }
  if (!any)
    throw InputError(std::string(kField) +
                     ": no embedding layer has a dynamic table (storage \"dynamic\"): static rows have no scores to "
                     "dump by");
  if (dump.interval > config.solver.max_iter)
    throw InputError(std::string(kField) + ".interval: " + std::to_string(dump.interval) +
                     " timed iterations between dumps, but the run has solver.max_iter = " +
                     std::to_string(config.solver.max_iter) + ": no dump would be taken");
}

std::filesystem::path iteration_directory(const std::filesystem::path& root, std::int64_t iteration) {
  char name[32];
  std::snprintf(name, sizeof name, "iteration-%08lld", static_cast<long long>(iteration));
  return root / name;
}

IncrementalDumps::IncrementalDumps(comm::Communicator& comm, const config::Config& config,
                                   embedding::EmbeddingEngine& engine)
    : comm_(comm), engine_(engine), root_(resolved_root(config)), interval_(config.solver.incremental_dump.interval),
      background_(config.solver.incremental_dump.background), writer_busy_(std::make_shared<std::atomic<bool>>(false)) {
  for (std::size_t l = 0; l < engine.layers(); ++l)
    if (config.embeddings[l].storage.dynamic) layers_.push_back({l, config.embeddings[l].name});
  comm::run_agreed(comm, [&] {
    if (comm.rank() != 0) return;
    std::error_code ec;
    std::filesystem::create_directories(root_, ec);
    if (ec || !std::filesystem::is_directory(root_))
      throw InputError(std::string(kField) + ".directory: cannot create " + root_.string() + ": " +
                       (ec ? ec.message() : "a file of that name is in the way"));
  });
}

IncrementalDumps::~IncrementalDumps() {
  if (writer_.joinable()) writer_.join();
}

bool IncrementalDumps::writing() const noexcept { return writer_busy_->load(std::memory_order_acquire); }

void IncrementalDumps::dump(std::int64_t iterations) {
  Stopwatch waited;
  complete_pending();  // the previous background dump: its writer joined, its manifest written
  const double wait_s = waited.seconds();
  const std::filesystem::path directory = iteration_directory(root_, iterations);
  Pending pending;
  pending.iteration = iterations;
  pending.wait_s = wait_s;
  std::vector<kv::DumpImage> images;
  std::vector<std::filesystem::path> paths;
  comm::run_agreed(comm_, [&] {
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);  // every rank: its file system may be its own
    if (ec) throw Error(directory.string() + ": cannot create the dump's directory: " + ec.message());
    Stopwatch copy;
    for (auto& layer : layers_) {
      images.push_back(engine_.store(layer.layer).dump_incremental_image(layer.threshold));
      pending.entries.push_back(images.back().entries);
      pending.thresholds.push_back(static_cast<std::int64_t>(layer.threshold));
      pending.next_thresholds.push_back(static_cast<std::int64_t>(images.back().next_threshold));
      pending.bytes += static_cast<std::int64_t>(images.back().bytes.size());
      layer.threshold = images.back().next_threshold;
      paths.push_back(directory / layer_file_name(layer.name, comm_.rank(), comm_.size()));
    }
    pending.copy_s = copy.seconds();
  });
  pending_ = std::move(pending);
  auto write = [images = std::move(images), paths = std::move(paths)]() {
    for (std::size_t i = 0; i < images.size(); ++i) kv::write_dump_image(images[i], paths[i]);
  };
  if (!background_) {
    comm::run_agreed(comm_, [&] {
      Stopwatch written;
      write();
      pending_.write_s = written.seconds();
    });
    complete_pending();
    return;
  }
  writer_busy_->store(true, std::memory_order_release);
  writer_ = std::thread([this, write = std::move(write), busy = writer_busy_]() mutable {
    Stopwatch written;
    try {
      write();
    } catch (...) {
      writer_error_ = std::current_exception();
    }
    pending_.write_s = written.seconds();
    busy->store(false, std::memory_order_release);
  });
}

void IncrementalDumps::complete_pending() {
  comm::run_agreed(comm_, [&] {
    if (writer_.joinable()) writer_.join();
    if (const auto error = std::exchange(writer_error_, nullptr)) std::rethrow_exception(error);
  });
  if (pending_.iteration < 0) return;
  const std::size_t n = layers_.size();
  const auto ranks = static_cast<std::size_t>(comm_.size());
  std::vector<std::int64_t> entries(n * ranks), thresholds(n * ranks), next(n * ranks);
  comm_.allgather(std::span<const std::int64_t>(pending_.entries), std::span<std::int64_t>(entries));
  comm_.allgather(std::span<const std::int64_t>(pending_.thresholds), std::span<std::int64_t>(thresholds));
  comm_.allgather(std::span<const std::int64_t>(pending_.next_thresholds), std::span<std::int64_t>(next));
  DumpRecord record;
  record.iteration = pending_.iteration;
  for (const auto e : entries) record.entries += e;
  record.bytes = static_cast<std::int64_t>(comm_.allreduce(static_cast<double>(pending_.bytes), comm::ReduceOp::kSum));
  record.copy_s = slowest(comm_, pending_.copy_s);
  record.write_s = slowest(comm_, pending_.write_s);
  record.wait_s = slowest(comm_, pending_.wait_s);
  record.stall_s = slowest(comm_, pending_.copy_s + (background_ ? pending_.wait_s : pending_.write_s));
  records_.push_back(record);
  comm::run_agreed(comm_, [&] {
    if (comm_.rank() == 0) write_manifest(pending_, entries, thresholds, next);
  });
  pending_ = Pending{};
}

void IncrementalDumps::write_manifest(const Pending& pending, const std::vector<std::int64_t>& all_entries,
                                      const std::vector<std::int64_t>& all_thresholds,
                                      const std::vector<std::int64_t>& all_next) {
  const std::size_t n = layers_.size();
  nlohmann::json layers = nlohmann::json::array();
  for (std::size_t l = 0; l < n; ++l) {
    const auto* options = engine_.store(layers_[l].layer).table_options();
    nlohmann::json files = nlohmann::json::array();
    for (int r = 0; r < comm_.size(); ++r) {
      const std::size_t at = static_cast<std::size_t>(r) * n + l;  // allgather: rank-major
      files.push_back({{"rank", r},
                       {"file", layer_file_name(layers_[l].name, r, comm_.size())},
                       {"entries", all_entries[at]},
                       {"threshold", static_cast<std::uint64_t>(all_thresholds[at])},
                       {"next_threshold", static_cast<std::uint64_t>(all_next[at])}});
    }
    layers.push_back({{"name", layers_[l].name},
                      {"score_strategy", options ? std::string(kv::score_rules(options->score_strategy).name) : ""},
                      {"files", std::move(files)}});
  }
  const nlohmann::json manifest = {{"iteration", pending.iteration},
                                   {"ranks", comm_.size()},
                                   {"mode", background_ ? "background" : "blocking"},
                                   {"layers", std::move(layers)}};
  const std::string text = manifest.dump(2) + "\n";
  AtomicFile out(iteration_directory(root_, pending.iteration) / "manifest.json");
  out.write(text.data(), text.size());
  out.commit();
}

OnlineDumpResults IncrementalDumps::finish(std::size_t iterations_run) {
  complete_pending();  // the run's end waits for the last writer: not a stall of training
  OnlineDumpResults results;
  results.background = background_;
  results.dumps = records_;
  if (background_) {
    overlapped_.resize(iterations_run, 0.0);
    results.overlapped.resize(iterations_run);
    comm_.allreduce(std::span<const double>(overlapped_), std::span<double>(results.overlapped), comm::ReduceOp::kMax);
  }
  return results;
}

}  // namespace embscale::run
