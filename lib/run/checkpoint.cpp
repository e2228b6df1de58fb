#include "run/checkpoint.hpp"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include <nlohmann/json.hpp>

#include "comm/failure.hpp"
#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/timer.hpp"
#include "run/dense_objective.hpp"
#include "run/online_dumps.hpp"

namespace embscale::run {
namespace {

constexpr const char* kField = "solver.checkpoint";
constexpr const char* kFormat = "embscale checkpoint";
constexpr int kVersion = 1;

std::filesystem::path resolved(const config::Config& config, const std::string& path) {
  const std::filesystem::path p = path;
  return p.is_absolute() ? p : config.directory / p;
}

std::string rank_suffix(int rank, int ranks) { return "rank-" + std::to_string(rank) + "-of-" + std::to_string(ranks); }

void write_text(const std::filesystem::path& path, const std::string& text) {
  AtomicFile out(path);
  out.write(text.data(), text.size());
  out.commit();
}

nlohmann::json read_json(const std::filesystem::path& path, const std::string& what) {
  std::ifstream in(path);
  if (!in) throw InputError(path.string() + ": cannot read " + what);
  std::stringstream text;
  text << in.rdbuf();
  nlohmann::json j = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) throw InputError(path.string() + ": " + what + " is not a JSON object");
  return j;
}

// The config as a flat map of JSON pointers, without the fields a resumed run may change.
nlohmann::json comparable(const nlohmann::json& config) {
  nlohmann::json flat = config.flatten();
  for (auto it = flat.begin(); it != flat.end();) {
    const std::string& key = it.key();
    const bool resumable = std::any_of(std::begin(kResumableFields), std::end(kResumableFields), [&](const char* f) {
      const std::string field = f;
      return key == field || key.starts_with(field + "/");
    });
    it = resumable ? flat.erase(it) : std::next(it);
  }
  return flat;
}

// InputError naming the first field (JSON pointer order) where the checkpoint's config and this
// one differ, but for the resumable fields.
void check_same_config(const nlohmann::json& saved, const nlohmann::json& now, const std::filesystem::path& manifest) {
  const nlohmann::json a = comparable(saved), b = comparable(now);
  if (a == b) return;
  std::vector<std::string> keys;
  for (const auto& [key, value] : a.items()) keys.push_back(key);
  for (const auto& [key, value] : b.items()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  for (const auto& key : keys) {
    const bool in_a = a.contains(key), in_b = b.contains(key);
    if (in_a && in_b && a[key] == b[key]) continue;
    throw InputError(manifest.string() + ": the checkpoint was saved by a run whose config has " + key + " = " +
                     (in_a ? a[key].dump() : "(absent)") + "; this config has " + (in_b ? b[key].dump() : "(absent)") +
                     ": a checkpoint resumes the run that saved it (only solver.max_iter, display, checkpoint, "
                     "incremental_dump and non_finite_loss may change)");
  }
}

// The bytes of this rank's files in `directory`.
std::int64_t rank_bytes(const std::filesystem::path& directory, const std::string& suffix) {
  std::int64_t bytes = 0;
  for (const auto& entry : std::filesystem::directory_iterator(directory)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.find(suffix) != std::string::npos && !name.starts_with("."))
      bytes += static_cast<std::int64_t>(entry.file_size());
  }
  return bytes;
}

// The complete checkpoints under `root`, oldest first.
std::vector<std::filesystem::path> complete_checkpoints(const std::filesystem::path& root) {
  std::vector<std::filesystem::path> found;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(root, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_directory() && name.starts_with("iteration-") &&
        std::filesystem::exists(entry.path() / "manifest.json"))
      found.push_back(entry.path());
  }
  std::sort(found.begin(), found.end());  // the iteration is zero-padded: name order is iteration order
  return found;
}

}  // namespace

void check_checkpoints(const config::Config& config) {
  const auto& c = config.solver.checkpoint;
  if (!c.saves() && !c.resumes()) return;
  const std::string field = kField;
  if (config::runs_on_parameter_servers(config))
    throw InputError(field +
                     ": a parameter-server run's servers save and load their shards "
                     "(parameter_server.save_directory, load_directory); its run has no checkpoint");
  if (config::runs_on_gpu(config))
    throw InputError(field + ": GPU layers are not checkpointed yet (their rows are in the GPU's memory)");
  for (const auto& layer : config.embeddings)
    if (layer.storage.two_tier())
      throw InputError(field + ": layer " + layer.name +
                       " keeps its rows in two tiers (caching or global_hbm_for_values), which a checkpoint cannot "
                       "restore as they were");
  if (c.resumes() && config.eviction)
    throw InputError(field +
                     ".resume_from: a resumed run cannot carry an eviction study (its oracles would start "
                     "empty while the tables do not); remove the eviction section");
  if (c.interval > config.solver.max_iter)
    throw InputError(field + ".interval: " + std::to_string(c.interval) +
                     " timed iterations between checkpoints, but the run has solver.max_iter = " +
                     std::to_string(config.solver.max_iter) + ": none would be saved (0: only at a stop)");
}

std::filesystem::path find_checkpoint(const std::filesystem::path& path) {
  if (std::filesystem::exists(path / "manifest.json")) return path;
  if (!std::filesystem::is_directory(path))
    throw InputError(path.string() + ": no such checkpoint (expected a directory written by solver.checkpoint)");
  const auto found = complete_checkpoints(path);
  if (found.empty())
    throw InputError(path.string() + ": holds no complete checkpoint (an iteration-<N>/ with its manifest.json)");
  return found.back();
}

Checkpoints::Checkpoints(comm::Communicator& comm, const config::Config& config, embedding::EmbeddingEngine& engine,
                         DenseModel* dense)
    : comm_(comm), config_(config), engine_(engine), dense_(dense),
      root_(config.solver.checkpoint.saves() ? resolved(config, config.solver.checkpoint.directory)
                                             : std::filesystem::path()),
      interval_(config.solver.checkpoint.interval), on_stop_(config.solver.checkpoint.on_stop),
      keep_(config.solver.checkpoint.keep) {}

std::filesystem::path Checkpoints::save(std::int64_t iterations) {
  const std::filesystem::path directory = iteration_directory(root_, iterations);
  if (!records_.empty() && records_.back().iteration == iterations) return directory;
  const std::string suffix = rank_suffix(comm_.rank(), comm_.size());
  Stopwatch watch;
  std::int64_t bytes = 0;
  comm::run_agreed(comm_, [&] {
    std::error_code ec;
    std::filesystem::create_directories(directory, ec);
    if (ec) throw Error(directory.string() + ": cannot create the checkpoint's directory: " + ec.message());
    nlohmann::json state = {{"engine_steps", engine_.steps()}, {"layers", nlohmann::json::object()}};
    for (std::size_t l = 0; l < engine_.layers(); ++l) {
      const std::string& name = config_.embeddings[l].name;
      nlohmann::json clocks = nlohmann::json::array();
      for (const auto& c : engine_.store(l).save_checkpoint(directory / (name + "." + suffix)))
        clocks.push_back({{"capacity", c.capacity}, {"score_now", c.score_now}});
      state["layers"][name] = std::move(clocks);
    }
    if (dense_) dense_->save_state(directory / ("dense." + suffix + ".bin"));
    write_text(directory / (suffix + ".json"), state.dump(2) + "\n");
    bytes = rank_bytes(directory, suffix);
  });
  CheckpointRecord record;
  record.iteration = iterations;
  record.seconds = comm_.allreduce(watch.seconds(), comm::ReduceOp::kMax);
  record.bytes = static_cast<std::int64_t>(comm_.allreduce(static_cast<double>(bytes), comm::ReduceOp::kSum));
  comm::run_agreed(comm_, [&] {
    if (comm_.rank() != 0) return;
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& layer : config_.embeddings) layers.push_back(layer.name);
    const nlohmann::json manifest = {{"format", kFormat},       {"version", kVersion}, {"iteration", iterations},
                                     {"ranks", comm_.size()},   {"layers", layers},    {"dense", dense_ != nullptr},
                                     {"config", config_.source}};
    write_text(directory / "manifest.json", manifest.dump(2) + "\n");
    if (keep_ > 0) {  // the oldest complete ones beyond `keep`; never the one just written
      const auto complete = complete_checkpoints(root_);
      for (std::size_t i = 0; i + static_cast<std::size_t>(keep_) < complete.size(); ++i)
        if (complete[i] != directory) std::filesystem::remove_all(complete[i]);
    }
  });
  records_.push_back(record);
  return directory;
}

void Checkpoints::check_resharding(int saved_ranks, const std::filesystem::path& manifest) const {
  const std::string saved = "the checkpoint was saved by " + std::to_string(saved_ranks) + " ranks; this run has " +
                            std::to_string(comm_.size());
  for (std::size_t l = 0; l < engine_.layers(); ++l) {
    const auto& layer = config_.embeddings[l];
    if (layer.storage.dynamic)
      throw InputError(manifest.string() + ": " + saved + ", and layer " + layer.name +
                       "'s dynamic table is its rank's (its buckets, capacity and scores): resume it on " +
                       std::to_string(saved_ranks) + " ranks");
    if (engine_.store(l).dim() != layer.embedding_vec_size)
      throw InputError(manifest.string() + ": " + saved + ", and layer " + layer.name +
                       " stores column slices whose width depends on the rank count: resume it on " +
                       std::to_string(saved_ranks) + " ranks");
  }
  if (dense_ && dense_->has_local_parameters())
    throw InputError(manifest.string() + ": " + saved +
                     ", and the dense model has feature-parallel (per-rank) parameters: resume it on " +
                     std::to_string(saved_ranks) + " ranks");
}

Checkpoints::Restored Checkpoints::restore() {
  const std::filesystem::path given = resolved(config_, config_.solver.checkpoint.resume_from);
  std::string directory_text, manifest_text;
  comm::run_agreed(comm_, [&] {
    if (comm_.rank() != 0) return;
    const auto directory = find_checkpoint(given);
    directory_text = directory.string();
    manifest_text = read_json(directory / "manifest.json", "the checkpoint's manifest").dump();
  });
  const auto texts = comm::broadcast_strings(comm_, {directory_text, manifest_text});
  const std::filesystem::path directory = texts[0];
  const std::filesystem::path manifest_path = directory / "manifest.json";
  const std::string suffix = rank_suffix(comm_.rank(), comm_.size());
  std::int64_t iteration = 0;
  comm::run_agreed(comm_, [&] {
    const nlohmann::json manifest = nlohmann::json::parse(texts[1]);
    if (manifest.value("format", "") != kFormat || manifest.value("version", 0) != kVersion)
      throw InputError(manifest_path.string() + ": not an embscale checkpoint of version " + std::to_string(kVersion));
    const int ranks = manifest.value("ranks", 0);
    if (ranks < 1) throw InputError(manifest_path.string() + ": \"ranks\": expected a rank count >= 1");
    check_same_config(manifest.at("config"), config_.source, manifest_path);
    if (ranks != comm_.size()) check_resharding(ranks, manifest_path);
    iteration = manifest.value("iteration", std::int64_t{-1});
    if (iteration < 0 || iteration >= config_.solver.max_iter)
      throw InputError(manifest_path.string() + ": the checkpoint follows timed iteration " +
                       std::to_string(iteration) + "; solver.max_iter = " + std::to_string(config_.solver.max_iter) +
                       " leaves nothing to run (raise max_iter to train on)");
    if (manifest.value("dense", false) != (dense_ != nullptr))
      throw InputError(manifest_path.string() + ": the checkpoint's dense model and this config's differ");
    // On another rank count every rank reads rank 0's step count and dense model (the same on
    // every rank: replicated) and takes its rows from every saved rank's files.
    const std::string saved_suffix = ranks == comm_.size() ? suffix : rank_suffix(0, ranks);
    const std::filesystem::path state_path = directory / (saved_suffix + ".json");
    const nlohmann::json state = read_json(state_path, "this rank's checkpoint state");
    std::vector<std::vector<embedding::RowStore::TableClock>> clocks(engine_.layers());
    std::int64_t steps = 0;
    try {
      for (std::size_t l = 0; l < engine_.layers(); ++l)
        for (const auto& c : state.at("layers").at(config_.embeddings[l].name))
          clocks[l].push_back({c.at("capacity").get<std::int64_t>(), c.at("score_now").get<std::uint64_t>()});
      steps = state.at("engine_steps").get<std::int64_t>();
    } catch (const nlohmann::json::exception& e) {
      throw InputError(state_path.string() + ": not a checkpoint's rank state of this config: " + e.what());
    }
    for (std::size_t l = 0; l < engine_.layers(); ++l) {
      const std::string& name = config_.embeddings[l].name;
      if (ranks == comm_.size()) {
        engine_.store(l).load_checkpoint(directory / (name + "." + suffix), clocks[l]);
        continue;
      }
      std::vector<std::filesystem::path> stems;
      for (int r = 0; r < ranks; ++r) stems.push_back(directory / (name + "." + rank_suffix(r, ranks)));
      engine_.store(l).load_resharded_checkpoint(stems);
    }
    engine_.set_steps(steps);
    if (dense_) dense_->load_state(directory / ("dense." + saved_suffix + ".bin"));
  });
  return {directory, iteration};
}

}  // namespace embscale::run
