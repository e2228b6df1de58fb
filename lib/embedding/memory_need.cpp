#include "embedding/memory_need.hpp"

#include <algorithm>

#include "embedding/engine.hpp"
#include "embedding/scheme_registry.hpp"
#include "kv/table_options.hpp"
#include "kv/value_types.hpp"

namespace embscale::embedding {
namespace {

constexpr double kKvSlotBytes = 8.0 + 1.0 + 8.0;  // a KV slot's key, digest and score

std::int32_t state_width(const config::EmbeddingLayer& layer, std::int32_t width) {
  if (!layer.storage.table.training) return 0;
  return make_sparse_optimizer(layer.optimizer, width)->state_width();
}

LayerMemoryNeed static_need(const LayerSpec& spec, const SchemeEntry& entry, int ranks) {
  const auto& layer = *spec.config;
  const std::int32_t width = entry.widest_row ? entry.widest_row(spec, ranks) : spec.dim();
  const std::int32_t state = state_width(layer, width);
  const auto value_bytes = kv::value_bytes(layer.storage.table.value_type);
  const double row_bytes = static_cast<double>(width + state) * static_cast<double>(value_bytes);
  LayerMemoryNeed need{spec.path,
                       "static storage: the rows of its slots (the data's slot_size_array) placed by " +
                           std::string(entry.name) + ", each " + std::to_string(width) + " values + " +
                           std::to_string(state) + " of the optimizer's state, " + std::to_string(value_bytes) +
                           " bytes a value",
                       {}};
  for (const auto rows : static_rows_per_rank(spec, entry, ranks))
    need.bytes.push_back(static_cast<double>(rows) * row_bytes);
  return need;
}

LayerMemoryNeed dynamic_need(const LayerSpec& spec, int ranks) {
  const auto& layer = *spec.config;
  const auto& storage = layer.storage;
  const std::int32_t dim = spec.dim();
  const double row_bytes = static_cast<double>(dim + state_width(layer, dim)) *
                           static_cast<double>(kv::value_bytes(storage.table.value_type));
  const auto slots = static_cast<double>(kv::initial_buckets(storage.table) * storage.table.bucket_capacity);
  double rows = slots * row_bytes;
  if (storage.two_tier()) rows = std::min(rows, static_cast<double>(storage.global_hbm_for_values));
  const std::string capacity = storage.table.init_capacity > 0 ? "init_capacity" : "max_capacity (init_capacity 0)";
  LayerMemoryNeed need{spec.path,
                       "its KV table at " + spec.path + ".storage." + capacity + ": " +
                           std::to_string(static_cast<std::int64_t>(slots)) + " slots" +
                           (storage.two_tier() ? ", rows up to global_hbm_for_values" : ""),
                       {}};
  need.bytes.assign(static_cast<std::size_t>(ranks), slots * kKvSlotBytes + rows);
  return need;
}

}  // namespace

std::vector<std::int64_t> static_rows_per_rank(const LayerSpec& spec, const SchemeEntry& entry, int ranks) {
  std::vector<std::int64_t> rows(static_cast<std::size_t>(ranks), 0);
  if (entry.table_owners) {
    const auto owners = entry.table_owners(spec, ranks);
    for (std::size_t s = 0; s < owners.size(); ++s) rows[static_cast<std::size_t>(owners[s])] += spec.slot_sizes[s];
  } else if (entry.most_rows) {
    std::fill(rows.begin(), rows.end(), entry.most_rows(spec, ranks));
  }
  return rows;
}

std::vector<LayerMemoryNeed> host_memory_at_start(const config::Config& config,
                                                  std::span<const std::int64_t> slot_sizes, int ranks) {
  std::vector<LayerMemoryNeed> needs;
  for (std::size_t i = 0; i < config.embeddings.size(); ++i) {
    const auto& layer = config.embeddings[i];
    if (config::is_auto_sharding(layer.sharding) || layer.sharding == config::kParameterServerSharding) continue;
    if (layer.device == config::Device::kGpu) continue;
    const LayerSpec spec = make_layer_spec(nullptr, config, i, slot_sizes);
    needs.push_back(layer.storage.dynamic ? dynamic_need(spec, ranks) : static_need(spec, scheme_of(layer), ranks));
  }
  return needs;
}

std::vector<LayerMemoryNeed> parameter_server_memory_at_start(const config::Config& config,
                                                              std::span<const std::int64_t> slot_sizes, int ranks,
                                                              int servers) {
  EMBSCALE_EXPECTS(servers >= 1 && servers < ranks, "a parameter server's run has servers and trainers");
  std::vector<LayerMemoryNeed> needs;
  const int trainers = ranks - servers;
  for (std::size_t i = 0; i < config.embeddings.size(); ++i) {
    const auto& layer = config.embeddings[i];
    if (layer.sharding != config::kParameterServerSharding) continue;
    const LayerSpec spec = make_layer_spec(nullptr, config, i, slot_sizes);
    LayerMemoryNeed need;
    if (layer.storage.dynamic) {
      need = dynamic_need(spec, ranks);
      need.sized_by += servers == 1 ? " on its server" : " on each of the " + std::to_string(servers) + " servers";
    } else {
      const std::int32_t width = spec.dim();
      const std::int32_t state = state_width(layer, width);
      const auto value_bytes = kv::value_bytes(layer.storage.table.value_type);
      const double row_bytes = static_cast<double>(width + state) * static_cast<double>(value_bytes);
      const std::int64_t vocabulary = spec.vocabulary();
      need.path = spec.path;
      need.sized_by = "static storage on " + std::to_string(servers) + (servers == 1 ? " server" : " servers") +
                      ": its " + std::to_string(vocabulary) + " rows by id % servers, each " + std::to_string(width) +
                      " values + " + std::to_string(state) + " of the optimizer's state, " +
                      std::to_string(value_bytes) + " bytes a value";
      need.bytes.assign(static_cast<std::size_t>(ranks), 0.0);
      for (int s = 0; s < servers; ++s) {
        const std::int64_t rows = vocabulary > s ? (vocabulary - s + servers - 1) / servers : 0;
        need.bytes[static_cast<std::size_t>(trainers + s)] = static_cast<double>(rows) * row_bytes;
      }
    }
    for (int t = 0; t < trainers; ++t) need.bytes[static_cast<std::size_t>(t)] = 0.0;  // trainers hold no rows
    needs.push_back(std::move(need));
  }
  return needs;
}

}  // namespace embscale::embedding
