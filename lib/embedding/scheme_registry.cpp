#include "embedding/scheme_registry.hpp"

#include <array>
#include <string>

#include "core/error.hpp"

namespace embscale::embedding {

// One factory (and optional check) per scheme, each defined in schemes/<name>.cpp.
std::unique_ptr<EmbeddingScheme> make_all2all_dense(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_distributed_slot(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_localized_slot(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_table_wise(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_row_wise(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_column_wise(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_table_row_wise(const LayerSpec&);
std::unique_ptr<EmbeddingScheme> make_data_parallel(const LayerSpec&);
void check_table_wise(const LayerSpec&, int ranks);
void check_column_wise(const LayerSpec&, int ranks);
void check_table_row_wise(const LayerSpec&, int ranks);
void check_data_parallel(const LayerSpec&, int ranks);

namespace {

constexpr const char* kSharded = "ShardedEmbedding";

constexpr std::array<SchemeEntry, 9> kSchemes = {{
    {"all2all_dense", "All2AllDenseEmbedding", "SOK", make_all2all_dense},
    {"distributed_slot", "DistributedSlotSparseEmbeddingHash", "HugeCTR", make_distributed_slot},
    {"distributed_sparse", "DistributedSparseEmbedding", "SOK (= HugeCTR's distributed slot)", make_distributed_slot},
    {"localized_slot", "LocalizedSlotSparseEmbeddingHash", "HugeCTR", make_localized_slot},
    {"table_wise", kSharded, "TorchRec", make_table_wise, check_table_wise},
    {"row_wise", kSharded, "TorchRec", make_row_wise},
    {"column_wise", kSharded, "TorchRec", make_column_wise, check_column_wise},
    {"table_row_wise", kSharded, "TorchRec", make_table_row_wise, check_table_row_wise},
    {"data_parallel", kSharded, "TorchRec", make_data_parallel, check_data_parallel},
}};

}  // namespace

std::span<const SchemeEntry> schemes() { return kSchemes; }

const SchemeEntry& scheme_of(const config::EmbeddingLayer& layer) {
  // A ShardedEmbedding layer may name any scheme, HugeCTR's and SOK's too: one sweep axis over
  // `sharding` then covers every scheme.
  const bool sharded = layer.type == kSharded;
  std::string names;
  for (const auto& entry : kSchemes) {
    if (sharded ? layer.sharding == entry.name : layer.type == entry.config_type) return entry;
    names += (names.empty() ? "\"" : ", \"") + std::string(entry.name) + "\"";
  }
  if (sharded && config::is_auto_sharding(layer.sharding))
    throw InputError("layers[" + layer.name + "].sharding: \"" + layer.sharding + "\" is planned before a run "
                     "(embscale run and sweep do it; embscale plan writes the plan)");
  if (sharded && layer.sharding == config::kParameterServerSharding)
    throw InputError("layers[" + layer.name + "].sharding: \"parameter_server\" runs on server ranks (lib/ps; embscale "
                     "run and sweep start them), not in the engine");
  if (sharded)
    throw InputError("layers[" + layer.name + "].sharding: expected one of " + names +
                     ", \"parameter_server\", \"auto\" or \"auto_skew_blind\", got \"" + layer.sharding + "\"");
  throw InputError("layers[" + layer.name + "].type: \"" + layer.type + "\" has no scheme in this build");
}

}  // namespace embscale::embedding
