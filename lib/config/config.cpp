// Entry points of lib/config: JSON (value, text, file, embedded default) to a validated Config.
// The sections are parsed in solver.cpp, optimizer.cpp, data_layer.cpp and layers.cpp.
#include "config/config.hpp"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>

#include "config/json_reader.hpp"
#include "config/json_text.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

constexpr auto kEmbeddedOrigin = "<embedded default>";

// The version is checked before anything else: a file of another version would otherwise fail
// on its first renamed key with a message that hides the real cause.
void check_schema_version(const ObjectReader& top) {
  const std::string supported = std::to_string(kSchemaVersion) + " (the only schema version this embscale reads)";
  const auto version = top.required("schema_version", supported);
  if (!version.json().is_number_integer() || version.json() != kSchemaVersion) version.fail(supported);
}

}  // namespace

Config parse_config(const nlohmann::json& json, const std::string& origin) {
  const ObjectReader top(ValueReader(json, "", origin));
  check_schema_version(top);
  top.only_keys({"schema_version", "solver", "optimizer", "layers"});
  Config c;
  c.schema_version = kSchemaVersion;
  c.solver = parse_solver(top.object("solver"));
  c.optimizer = parse_optimizer(top.object("optimizer"));  // before the layers: their default
  parse_layers(top.required("layers", "a non-empty array of layer objects"), c);
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

Config load_config_file(const std::filesystem::path& path) { return parse_config_text(read_config_text(path), path.string()); }

Config default_config() { return parse_config_text(default_config_text(), kEmbeddedOrigin); }

void resolve_batch_for_ranks(Config& config, int ranks) {
  const std::int64_t per_rank = config.solver.batchsize_per_rank;
  if (per_rank == 0) return;
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

std::string to_string(Combiner c) { return c == Combiner::kSum ? "sum" : "mean"; }

}  // namespace embscale::config
