// Entry points of lib/config: JSON (value, text, file, embedded default) to a validated Config.
// The sections are parsed in solver.cpp, optimizer.cpp, data_layer.cpp and layers.cpp.
#include "config/config.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "config/hugectr_names.hpp"
#include "config/json_reader.hpp"
#include "config/json_text.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

constexpr auto kEmbeddedOrigin = "<embedded default>";

// The version is checked before anything else: a file of another version would otherwise fail
// on its first renamed key with a message that hides the real cause. A file without one is a
// HugeCTR file (HugeCTR's JSON has no version), read by this schema, which keeps HugeCTR's names.
void check_schema_version(const ObjectReader& top) {
  const std::string supported = std::to_string(kSchemaVersion) + " (the only schema version this embscale reads)";
  const auto version = top.optional("schema_version");
  if (version && (!version->json().is_number_integer() || version->json() != kSchemaVersion)) version->fail(supported);
}

// The HugeCTR keys of the solver and of the Data layer that embscale accepts and does not act on
// (snapshots, model files; evaluation without dense layers), after the layers parse_layers recorded.
void record_keys_not_run(const ObjectReader& top, Config& c) {
  const bool evaluates = !c.dense_layers.empty();
  if (!evaluates) c.solver.evaluation = Evaluation{};
  hugectr::append_solver_keys_not_run(top.object("solver"), c.not_run, evaluates);
  const auto& layers = top.required("layers", "").json();
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (layers[i].value("name", "") == c.data.name && layers[i].value("type", "") == hugectr::kDataLayer)
      hugectr::append_data_keys_not_run(ObjectReader(ValueReader(layers[i], layer_path(layers, i), top.origin())),
                                        c.not_run, evaluates);
}

}  // namespace

Config parse_config(const nlohmann::json& json, const std::string& origin) {
  const ObjectReader top(ValueReader(json, "", origin));
  check_schema_version(top);
  top.only_keys({"schema_version", "solver", "optimizer", "layers", "eviction", "planner", "parameter_server"});
  Config c;
  c.schema_version = kSchemaVersion;
  c.origin = origin;
  c.solver = parse_solver(top.object("solver"));
  c.optimizer = parse_optimizer(top.object("optimizer"));  // before the layers: their default
  parse_layers(top.required("layers", "a non-empty array of layer objects"), c);
  record_keys_not_run(top, c);
  hugectr::append_keys_not_used(top, c.not_used);
  check_layer_devices(top, c);
  if (top.has("eviction")) c.eviction = parse_eviction_study(top.object("eviction"), c);
  if (top.has("planner")) c.planner = parse_planner_settings(top.object("planner"));
  if (top.has("parameter_server")) c.parameter_server = parse_parameter_server_settings(top.object("parameter_server"));
  check_parameter_server_layers(c, origin);
  c.source = json;
  return c;
}

Config parse_config_text(const std::string& text, const std::string& origin) {
  return parse_config(parse_json_text(text, origin), origin);
}

std::string read_config_text(const std::filesystem::path& path) {
  // A directory opens as a stream on Linux and then reads as empty; say what it is instead.
  std::error_code ignored;
  if (std::filesystem::is_directory(path, ignored))
    throw InputError(path.string() + ": cannot open config file: " + std::strerror(EISDIR));
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path.string() + ": cannot open config file: " + std::strerror(errno));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) throw InputError(path.string() + ": cannot read config file: " + std::strerror(errno));
  return text.str();
}

Config load_config_file(const std::filesystem::path& path) {
  Config c = parse_config_text(read_config_text(path), path.string());
  c.directory = config_directory(path);
  return c;
}

Config default_config() { return parse_config_text(default_config_text(), kEmbeddedOrigin); }

void resolve_batch_for_ranks(Config& config, int world_ranks) {
  const std::int64_t per_rank = config.solver.batchsize_per_rank;
  if (per_rank == 0) return;
  const int ranks = batch_ranks(config, world_ranks);
  if (per_rank > std::numeric_limits<std::int64_t>::max() / ranks)
    throw InputError("solver.batchsize_per_rank: " + std::to_string(per_rank) + " samples on each of " +
                     std::to_string(ranks) + " ranks overflow a 64-bit global batch");
  config.solver.batchsize = per_rank * ranks;
}

std::int64_t total_vocabulary(const DataLayer& data) {
  std::int64_t total = 0;  // parse_config guarantees the sum fits
  for (const auto size : data.slot_size_array) total += size;
  return total;
}

std::filesystem::path config_directory(const std::filesystem::path& config_file) { return config_file.parent_path(); }

std::filesystem::path data_source_path(const Config& config) {
  const std::filesystem::path source = config.data.source;
  return source.is_relative() ? config.directory / source : source;
}

void keep_embedding_part(Config& config) {
  std::vector<std::string> dropped;
  if (!config.dense_layers.empty())
    dropped.push_back("the dense layers (" + config.dense_layers.front().path + " to " +
                      config.dense_layers.back().path + ", " + std::to_string(config.dense_layers.size()) + " layers)");
  if (config.solver.evaluation.runs()) dropped.emplace_back("solver.eval_interval (evaluation)");
  config.not_run.insert(config.not_run.begin(), dropped.begin(), dropped.end());
  config.dense_layers.clear();
  config.solver.evaluation = Evaluation{};
}

std::string describe_not_run(const Config& config) {
  std::string list;
  for (const auto& entry : config.not_run) list += (list.empty() ? "" : ", ") + entry;
  return list;
}

std::string describe_not_used(const Config& config) {
  std::string list;
  for (const auto& entry : config.not_used) list += (list.empty() ? "" : "; ") + entry;
  return list;
}

void check_runs_whole(const Config& config, bool embedding_only, const std::string& origin) {
  if (config.not_run.empty() || embedding_only) return;
  throw InputError(origin +
                   ": embscale runs the embedding part of this config only; not run: " + describe_not_run(config) +
                   ". Pass --embedding-only to run the embedding layers and skip these (a HugeCTR file's dense "
                   "network, evaluation and checkpoints)");
}

std::string to_string(Device device) { return device == Device::kGpu ? "gpu" : "host"; }

std::string to_string(DeviceExchange exchange) { return exchange == DeviceExchange::kNccl ? "nccl" : "mpi"; }

bool runs_on_gpu(const Config& config) {
  return std::any_of(config.embeddings.begin(), config.embeddings.end(),
                     [](const EmbeddingLayer& layer) { return layer.device == Device::kGpu; });
}

std::string to_string(Combiner c) { return c == Combiner::kSum ? "sum" : "mean"; }

std::string to_string(DataFormat format) {
  switch (format) {
    case DataFormat::kSynthetic: return "Synthetic";
    case DataFormat::kNorm: return "Norm";
    case DataFormat::kRaw: return "Raw";
    case DataFormat::kEmbscale: return "Embscale";
  }
  return "?";
}

}  // namespace embscale::config
