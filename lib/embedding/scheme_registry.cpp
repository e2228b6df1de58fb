#include "embedding/scheme_registry.hpp"

#include <string>

#include "config/json_reader.hpp"
#include "core/error.hpp"

namespace embscale::embedding {

// The registry: one line per scheme, in the order --help, sweeps and reports list them. Each names
// the function its file schemes/<name>.cpp defines, `SchemeEntry <name>_scheme()`, which fills the
// entry (factory, check, capabilities, planner model).
#define EMBSCALE_FOR_EACH_SCHEME(SCHEME) \
  SCHEME(all2all_dense)                  \
  SCHEME(distributed_slot)               \
  SCHEME(distributed_sparse)             \
  SCHEME(localized_slot)                 \
  SCHEME(table_wise)                     \
  SCHEME(row_wise)                       \
  SCHEME(column_wise)                    \
  SCHEME(table_row_wise)                 \
  SCHEME(data_parallel)                  \
  SCHEME(hot_replicated)

#define EMBSCALE_DECLARE_SCHEME(name) SchemeEntry name##_scheme();
EMBSCALE_FOR_EACH_SCHEME(EMBSCALE_DECLARE_SCHEME)
#undef EMBSCALE_DECLARE_SCHEME

std::span<const SchemeEntry> schemes() {
#define EMBSCALE_SCHEME_ENTRY(name) name##_scheme(),
  static const std::vector<SchemeEntry> entries = {EMBSCALE_FOR_EACH_SCHEME(EMBSCALE_SCHEME_ENTRY)};
#undef EMBSCALE_SCHEME_ENTRY
  return entries;
}

const SchemeEntry* find_scheme(const std::string& name) {
  for (const auto& entry : schemes())
    if (name == entry.name) return &entry;
  return nullptr;
}

std::string scheme_names_where(bool (*has)(const SchemeEntry&)) {
  std::vector<std::string> names;
  for (const auto& entry : schemes())
    if (has(entry)) names.emplace_back(entry.name);
  std::string prose;
  for (std::size_t i = 0; i < names.size(); ++i)
    prose += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return prose;
}

const SchemeEntry& scheme_of(const config::EmbeddingLayer& layer) {
  // A ShardedEmbedding layer may name any scheme, HugeCTR's and SOK's too: one sweep axis over
  // `sharding` then covers every scheme.
  const bool sharded = layer.type == kShardedEmbedding;
  std::vector<std::string> names;
  for (const auto& entry : schemes()) {
    const bool typed =
        layer.type == entry.config_type || (entry.also_config_type && layer.type == entry.also_config_type);
    if (sharded ? layer.sharding == entry.name : typed) return entry;
    names.emplace_back(entry.name);
  }
  if (sharded && config::is_auto_sharding(layer.sharding))
    throw InputError("layers[" + layer.name + "].sharding: \"" + layer.sharding +
                     "\" is planned before a run "
                     "(embscale run and sweep do it; embscale plan writes the plan)");
  if (sharded && layer.sharding == config::kParameterServerSharding)
    throw InputError("layers[" + layer.name +
                     "].sharding: \"parameter_server\" runs on server ranks (lib/ps; embscale "
                     "run and sweep start them), not in the engine");
  if (sharded) {
    names.insert(names.end(),
                 {config::kParameterServerSharding, config::kAutoSharding, config::kAutoSkewBlindSharding});
    throw InputError("layers[" + layer.name + "].sharding: expected one of " + config::quoted_list(names) + ", got \"" +
                     layer.sharding + "\"" + config::did_you_mean(layer.sharding, names));
  }
  throw InputError("layers[" + layer.name + "].type: \"" + layer.type + "\" has no scheme in this build");
}

}  // namespace embscale::embedding
