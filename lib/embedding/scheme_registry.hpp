// The schemes by name: the one list a new scheme is added to (lib/embedding/README.md, "Adding a
// scheme"). A layer's scheme is the entry whose `config_type` is the layer's type (HugeCTR's and
// SOK's layer types name their scheme), or, for a "ShardedEmbedding" layer, whose `name` is its
// "sharding" (any scheme's name: TorchRec's shardings have no other type; the rest may be named
// either way, so that one sweep over `sharding` covers every scheme).
//
// An entry also carries what the rest of the code asks about its scheme (the engine's checks of a
// layer's fields, the collectives' step capture, the planner), so that nothing compares scheme
// names: a new scheme is its file schemes/<name>.cpp, defining `SchemeEntry <name>_scheme()`, and
// one line in scheme_registry.cpp.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "embedding/ownership.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

inline constexpr const char* kShardedEmbedding = "ShardedEmbedding";  // TorchRec's shardings' layer type

// What the planner needs of a scheme to predict its step and memory (lib/plan): its ownership
// (the loads and the data flow costed per rank), its collective calls per step (forward and
// backward: each pays the planner's fixed cost per call), and whether it runs on static storage
// only. A scheme without one is neither chosen nor predicted.
struct PlannerModel {
  Ownership ownership = Ownership::kOneRank;
  int collectives = 0;
  bool static_only = false;
  // Whether an "auto" layer may be planned onto it. False: a config that names it is predicted,
  // but the planner does not choose it (it duplicates a choosable scheme's placement).
  bool choosable = true;
};

struct SchemeEntry {
  const char* name = nullptr;         // the scheme's name in reports (the `scheme` run attribute)
  const char* config_type = nullptr;  // the layer type that selects it, or kShardedEmbedding
  // Another layer type that selects it, or null: HugeCTR's one-hot form of its localized slots
  // (LocalizedSlotSparseEmbeddingOneHot: one key per slot, rows indexed by the slot's key space,
  // the same placement and data flow).
  const char* also_config_type = nullptr;
  const char* origin = nullptr;  // who defines it (for --help and the README)
  SchemeFactory make = nullptr;
  // Throws InputError naming the field when the scheme cannot run this layer on `ranks` ranks;
  // null when it always can.
  void (*check)(const LayerSpec& spec, int ranks) = nullptr;
  // Sends each rank's distinct keys (de-duplicated before the exchange), so it may also run with
  // "deduplicate": false; the others send (key, bag) pairs and de-duplicate on the owners.
  bool dedups_before_exchange = false;
  // Places ranks in nodes: reads the layer's ranks_per_node (refused on every other scheme).
  bool places_ranks_in_nodes = false;
  // Routes a key by its row block within its slot's key space (so it cannot run on data that
  // gives no slot_size_array).
  bool splits_key_spaces = false;
  // A whole-table scheme (Ownership::kOneRank): the rank of each of the layer's tables (slots) on
  // `ranks` ranks, by which both its factory and the planner place them. Null for the others.
  std::vector<int> (*table_owners)(const LayerSpec& spec, int ranks) = nullptr;
  // The rows the fullest of `ranks` ranks holds of the layer, so that static storage is checked
  // against max_vocabulary_size_per_gpu before any rank allocates (and by `validate --ranks`).
  // Null for the whole-table schemes: table_owners answers for them.
  std::int64_t (*most_rows)(const LayerSpec& spec, int ranks) = nullptr;
  // The widest row a rank stores of the layer when it stores slices of the rows' columns (the
  // memory check before a run: memory_need.hpp); null: whole rows of the layer's dim.
  std::int32_t (*widest_row)(const LayerSpec& spec, int ranks) = nullptr;
  std::optional<PlannerModel> planner = std::nullopt;  // none: the planner neither chooses nor predicts it
  // Has a GPU step: a layer with "device": "gpu" may run it (refused by name on the others).
  bool runs_on_device = false;
};

std::span<const SchemeEntry> schemes();
// The entry of a layer; InputError naming layers[<name>].type or .sharding (with the names that
// run) when none matches.
const SchemeEntry& scheme_of(const config::EmbeddingLayer& layer);
// The entry named `name`; null when there is none.
const SchemeEntry* find_scheme(const std::string& name);
// The names of the entries for which `has` holds, as prose: "a", "a and b", "a, b and c".
std::string scheme_names_where(bool (*has)(const SchemeEntry&));

}  // namespace embscale::embedding
