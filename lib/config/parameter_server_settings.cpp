// The "parameter_server" section (lib/ps): how the ranks of a run split into trainers and servers
// for the layers whose "sharding" is "parameter_server", how the servers order the trainers'
// updates, and where they save and load their shards. Whether the run's rank count fits is checked
// when the count is known (lib/ps: check_parameter_server_run).
#include <algorithm>
#include <string>

#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {

bool runs_on_parameter_servers(const Config& config) {
  for (const auto& layer : config.embeddings)
    if (layer.sharding == kParameterServerSharding) return true;
  return false;
}

std::int32_t ParameterServerSettings::trainers_for(int ranks) const noexcept {
  return trainers > 0 ? trainers : ranks - servers;
}

int batch_ranks(const Config& config, int ranks) {
  if (!runs_on_parameter_servers(config) || !config.parameter_server) return ranks;
  return std::max(1, config.parameter_server->trainers_for(ranks));
}

ParameterServerSettings parse_parameter_server_settings(const ObjectReader& r) {
  r.only_keys({"servers", "trainers", "mode", "staleness", "transport", "pulls", "save_directory", "load_directory"});
  constexpr std::int64_t kMostRanks = 1 << 20;
  ParameterServerSettings p;
  p.servers = static_cast<std::int32_t>(r.integer("servers", IntRange::between(1, kMostRanks)));
  p.trainers = static_cast<std::int32_t>(r.integer_or("trainers", 0, IntRange::between(1, kMostRanks)));
  p.synchronous = r.one_of_or("mode", "synchronous", {"synchronous", "asynchronous"}) == "synchronous";
  if (const auto staleness = r.optional("staleness")) {
    p.staleness = staleness->integer(IntRange::between(0, 1'000'000));
    if (p.synchronous && p.staleness != 0)
      staleness->fail_with(
          "a synchronous server applies each step's pushes before the next pull (staleness 0); "
          "a staleness bound needs \"mode\": \"asynchronous\"");
  }
  p.ucx_transport = r.one_of_or("transport", "mpi", {"mpi", "ucx"}) == "ucx";
  p.one_sided_pulls = r.one_of_or("pulls", "messages", {"messages", "one_sided"}) == "one_sided";
  if (r.has("save_directory")) p.save_directory = r.name("save_directory");
  if (r.has("load_directory")) p.load_directory = r.name("load_directory");
  return p;
}

void check_parameter_server_layers(const Config& config, const std::string& origin) {
  if (!runs_on_parameter_servers(config)) return;
  const auto fail = [&](const std::string& path, const std::string& message) {
    throw InputError(origin + ": " + path + ": " + message);
  };
  const EmbeddingLayer& layer = *std::find_if(config.embeddings.begin(), config.embeddings.end(),
                                              [](const auto& e) { return e.sharding == kParameterServerSharding; });
  const std::string path = "layers[" + layer.name + "]";
  // One table per run: the servers' protocol (lib/ps/ps_messages.hpp) addresses one table, and
  // the world splits into trainers and servers for all of the run. A layer's slots are already
  // several tables over unified keys.
  if (config.embeddings.size() != 1)
    fail(path + ".sharding",
         "a parameter-server run has one embedding layer, on the servers (its slots are its "
         "tables); this config has " +
             std::to_string(config.embeddings.size()) + " (put their slots into one layer)");
  if (!config.parameter_server)
    fail(path + ".sharding",
         "\"parameter_server\" needs the top-level \"parameter_server\" section (at least "
         "\"servers\": how many of the run's ranks serve the table)");
  // Dynamic storage (Paddle's design: ids grow as they come, placed by hash) or static (every id
  // of the slots from the start, id % servers: rows a trainer can address, for one-sided pulls).
  const auto& settings = *config.parameter_server;
  if (settings.one_sided_pulls && layer.storage.dynamic)
    fail("parameter_server.pulls",
         "\"one_sided\" reads rows at addresses a trainer computes, which a dynamic table does not have; set "
         "the layer's storage to \"static\" or use \"messages\"");
  if (settings.one_sided_pulls && layer.storage.table.value_type != kv::ValueType::kFloat32)
    fail(path + ".storage.embedding_dtype",
         "one-sided pulls read fp32 rows as they are stored; expected \"fp32\" with \"pulls\": \"one_sided\"");
  if (!layer.storage.dynamic && (!settings.save_directory.empty() || !settings.load_directory.empty()))
    fail(std::string("parameter_server.") + (settings.save_directory.empty() ? "load_directory" : "save_directory"),
         "the servers save and load their shards as KV-table files, which static storage does not have; use "
         "\"dynamic\" storage to save or load");
  if (!layer.storage.table.training)
    fail(path + ".storage.training", "a parameter-server run trains its table (pull, push); expected true");
  if (config.eviction)
    fail("eviction",
         "the eviction study measures the engine's tables; a parameter-server run has none (remove "
         "the section or run another sharding)");
}

}  // namespace embscale::config
