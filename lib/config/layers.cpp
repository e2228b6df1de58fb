// The "layers" array: dispatch on each layer's type, the embedding layers, and the checks that
// span layers. Layers are addressed by name in messages ("layers[emb1]"), by index only when a
// layer has no usable name ("layers[3]").
#include <algorithm>
#include <limits>
#include <map>
#include <optional>
#include <utility>

#include "config/hugectr_names.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

constexpr std::int64_t kMaxEmbeddingVecSize = std::int64_t{1} << 16;

bool contains(const std::vector<std::string>& list, const std::string& value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// HugeCTR's combiner is 0 (sum) or 1 (mean); the names are accepted too.
Combiner parse_combiner(const ObjectReader& hparam) {
  const auto value = hparam.required("combiner", "0, 1, \"sum\" or \"mean\"");
  const auto& v = value.json();
  if ((v.is_number_integer() && v == 0) || v == "sum") return Combiner::kSum;
  if ((v.is_number_integer() && v == 1) || v == "mean") return Combiner::kMean;
  value.fail("0, 1, \"sum\" or \"mean\"");
}

// A name given twice is an error at the second layer, raised before any layer is parsed, so that
// no message addresses an ambiguous "layers[<name>]".
void check_unique_names(const ValueReader& layers) {
  std::map<std::string, std::size_t> first_index;
  for (std::size_t i = 0; i < layers.json().size(); ++i) {
    const auto& layer = layers.json()[i];
    if (!layer.is_object() || !layer.contains("name") || !layer["name"].is_string()) continue;
    const auto name = layer["name"].get<std::string>();
    const auto [first, inserted] = first_index.emplace(name, i);
    if (!inserted && !name.empty())
      ValueReader(layer["name"], "layers[" + std::to_string(i) + "].name", layers.origin())
          .fail("a name no other layer has", " (also the name of layers[" + std::to_string(first->second) + "])");
  }
}

// Every top is produced once, so a bottom names exactly one tensor.
void check_unique_tops(const std::vector<TensorName>& tops, const std::string& origin) {
  for (std::size_t i = 0; i < tops.size(); ++i)
    for (std::size_t j = 0; j < i; ++j)
      if (tops[i].name == tops[j].name)
        throw InputError(origin + ": " + tops[i].path + ": expected a name no other top has, got " +
                         describe_json(tops[i].name) + " (also " + tops[j].path + ")");
}

}  // namespace

// "slots": ascending distinct data-layer slot indices (their range is checked against the Data
// layer in parse_layers, wherever that layer sits).
std::vector<std::int32_t> parse_slot_subset(const ValueReader& value) {
  std::vector<std::int32_t> slots;
  for (const auto& slot : value.array(1, "a non-empty array of slot indices (0-based, ascending)")) {
    const auto index =
        static_cast<std::int32_t>(slot.integer(IntRange::between(0, std::numeric_limits<std::int32_t>::max())));
    if (!slots.empty() && index <= slots.back())
      slot.fail("a slot index above the previous one (" + std::to_string(slots.back()) + "): the list is ascending");
    slots.push_back(index);
  }
  return slots;
}

// The layers' own slot_size_array against the Data layer's: equal where both are given; a Norm
// Data layer without one takes theirs when they cover its every slot; a layer that gave sizes
// and no max_vocabulary_size_per_gpu holds its slots whole. Data still without key spaces (a Norm
// file, as HugeCTR's hash embeddings read it): the layers run on dynamic storage, HugeCTR's hash
// table of max_vocabulary_size_per_gpu rows per rank, unless they ask for static storage, which
// needs the key spaces.
void resolve_key_spaces(const ValueReader& layers, const std::string& data_path, Config& c) {
  const auto& elements = layers.json();
  const auto reader_of = [&](const EmbeddingLayer& layer) {
    for (std::size_t i = 0; i < elements.size(); ++i)
      if (elements[i].value("name", "") == layer.name)
        return ObjectReader(ValueReader(elements[i], layer_path(elements, i), layers.origin()));
    throw std::logic_error("an embedding layer parse_layers read is in the list");
  };
  std::vector<std::int64_t> from_layers(static_cast<std::size_t>(c.data.slot_num), 0);
  for (auto& layer : c.embeddings) {
    if (layer.slot_size_array.empty()) continue;
    const auto hparam = reader_of(layer).object("sparse_embedding_hparam");
    const auto given = hparam.required("slot_size_array", "");
    if (layer.slot_size_array.size() != layer.slots.size())
      given.fail("one size per slot of the layer (" + std::to_string(layer.slots.size()) + " sizes)");
    for (std::size_t k = 0; k < layer.slots.size(); ++k) {
      const auto slot = static_cast<std::size_t>(layer.slots[k]);
      if (c.data.key_spaces_known() && c.data.slot_size_array[slot] != layer.slot_size_array[k])
        given.fail("the sizes of its slots in " + data_path + ".slot_size_array (slot " + std::to_string(slot) + ": " +
                   std::to_string(c.data.slot_size_array[slot]) + ")");
      from_layers[slot] = layer.slot_size_array[k];
    }
    if (layer.max_vocabulary_size_per_gpu == 0)
      for (const auto size : layer.slot_size_array) layer.max_vocabulary_size_per_gpu += size;
  }
  if (!c.data.key_spaces_known() &&
      std::none_of(from_layers.begin(), from_layers.end(), [](std::int64_t size) { return size == 0; }))
    c.data.slot_size_array = from_layers;
  if (c.data.key_spaces_known()) return;
  for (auto& layer : c.embeddings) {
    const auto r = reader_of(layer);
    if (layer.sharding == kParameterServerSharding)
      r.required("sharding", "")
          .fail_with("the parameter server holds each slot's key space, which " + data_path +
                     " does not give: add its slot_size_array");
    if (is_auto_sharding(layer.sharding))
      r.required("sharding", "")
          .fail_with("\"" + layer.sharding + "\" plans from each slot's key space, which " + data_path +
                     " does not give: add its slot_size_array");
    if (r.has("storage")) {
      if (!layer.storage.dynamic)
        r.required("storage", "")
            .fail_with("static storage holds each slot's key space, which " + data_path +
                       " does not give: add its slot_size_array, or use \"type\": \"dynamic\"");
      continue;
    }
    // HugeCTR's hash table: max_vocabulary_size_per_gpu rows per rank (at least one bucket).
    layer.storage.dynamic = true;
    layer.storage.table.max_capacity = std::max(layer.max_vocabulary_size_per_gpu, layer.storage.table.bucket_capacity);
  }
}

namespace {

// A key only `scheme` reads: refused, naming the layer's scheme, on a layer of another.
std::optional<ValueReader> scheme_field(const ObjectReader& r, const std::string& key, const std::string& scheme,
                                        const std::string& sharding, const std::string& does) {
  auto value = r.optional(key);
  if (value && sharding != scheme)
    value->fail_with("\"" + key + "\" " + does + " of a \"" + scheme + "\" layer; this layer's scheme is " +
                     (sharding.empty() ? "its type's" : "\"" + sharding + "\""));
  return value;
}

// One place (a rank, a node: `places`) per slot of the layer.
std::vector<std::int32_t> places_per_slot(const ValueReader& value, const std::string& places) {
  std::vector<std::int32_t> out;
  for (const auto& place : value.array(1, "a non-empty array of " + places + ", one per slot of the layer"))
    out.push_back(
        static_cast<std::int32_t>(place.integer(IntRange::between(0, std::numeric_limits<std::int32_t>::max()))));
  return out;
}

}  // namespace

EmbeddingLayer parse_embedding_layer(const ObjectReader& r, const std::string& name, const std::string& type,
                                     const Optimizer& global, Device solver_device) {
  std::vector<std::string> keys = {"name",           "type",     "bottom",      "top",      "sparse_embedding_hparam",
                                   "optimizer",      "sharding", "table_ranks", "slots",    "deduplicate",
                                   "ranks_per_node", "storage",  "device",      "hot_rows", "table_nodes"};
  r.only_keys(hugectr::with_unused_keys(keys, hugectr::UnusedIn::kEmbedding));
  EmbeddingLayer e;
  e.name = name;
  e.type = type;
  e.bottom = r.name("bottom");
  e.top = r.name("top");
  if (type == hugectr::kShardedEmbedding) {
    e.sharding = r.name("sharding");  // which names run is the scheme registry's to say (lib/embedding)
  } else if (const auto sharding = r.optional("sharding")) {
    sharding->fail_with("\"sharding\" belongs to layers of type \"" + hugectr::kShardedEmbedding + "\"; a \"" + type +
                        "\" layer's type names its scheme");
  }
  const auto h = r.object("sparse_embedding_hparam");
  h.only_keys({"max_vocabulary_size_per_gpu", "slot_size_array", "embedding_vec_size", "combiner"});
  if (const auto sizes = h.optional("slot_size_array"))
    for (const auto& size : sizes->array(1, "a non-empty array of integers >= 1"))
      e.slot_size_array.push_back(size.integer(IntRange::at_least(1)));
  // Whether the rows fit is a run-time check: a rank's share depends on the number of ranks. A
  // layer that gives its slots' sizes instead (HugeCTR's one-hot embedding) holds them whole:
  // parse_layers sets it to their sum.
  if (e.slot_size_array.empty() || h.has("max_vocabulary_size_per_gpu"))
    e.max_vocabulary_size_per_gpu = h.integer("max_vocabulary_size_per_gpu", IntRange::at_least(1));
  e.embedding_vec_size =
      static_cast<std::int32_t>(h.integer("embedding_vec_size", IntRange::between(1, kMaxEmbeddingVecSize)));
  e.combiner = parse_combiner(h);
  e.optimizer = r.has("optimizer") ? parse_optimizer(r.object("optimizer")) : global;
  if (const auto slots = r.optional("slots")) e.slots = parse_slot_subset(*slots);
  // Their counts are checked against the layer's slots in parse_layers, the ranks' and nodes'
  // range at run time (the launcher's ranks decide it).
  if (const auto ranks = scheme_field(r, "table_ranks", "table_wise", e.sharding, "places the tables"))
    e.table_ranks = places_per_slot(*ranks, "ranks");
  if (const auto nodes = scheme_field(r, "table_nodes", "table_row_wise", e.sharding, "places the tables"))
    e.table_nodes = places_per_slot(*nodes, "nodes");
  if (const auto hot = scheme_field(r, "hot_rows", "hot_replicated", e.sharding, "gives the replicated rows")) {
    // A single number is every slot's (spread over the slots in parse_layers).
    if (hot->json().is_array())
      for (const auto& rows : hot->array(1, "a non-empty array of row counts, one per slot of the layer"))
        e.hot_rows.push_back(rows.integer(IntRange::at_least(0)));
    else e.hot_rows.push_back(hot->integer(IntRange::at_least(0)));
  }
  if (const auto dedup = r.optional("deduplicate")) e.deduplicate = dedup->boolean();
  e.ranks_per_node = static_cast<std::int32_t>(r.integer_or("ranks_per_node", 0, IntRange::between(0, 1 << 20)));
  if (r.has("storage")) e.storage = parse_embedding_storage(r.object("storage"));
  e.device = solver_device;
  if (r.has("device")) e.device = r.one_of("device", {"host", "gpu"}) == "gpu" ? Device::kGpu : Device::kHost;
  hugectr::check_unused_keys(r, hugectr::UnusedIn::kEmbedding);
  return e;
}

void parse_layers(const ValueReader& layers, Config& c) {
  const auto& origin = layers.origin();
  const auto elements = layers.array(1, "a non-empty array of layer objects");
  check_unique_names(layers);
  std::vector<TensorName> tops;
  std::vector<ValueReader> bottoms;                          // checked once the Data layer is known, wherever it sits
  std::vector<std::optional<ValueReader>> slot_lists;        // likewise
  std::vector<std::optional<ValueReader>> table_rank_lists;  // checked against the slots
  std::vector<std::optional<ValueReader>> hot_row_lists;     // likewise
  std::vector<std::optional<ValueReader>> table_node_lists;  // likewise
  std::vector<DenseCandidate> dense;                         // HugeCTR dense layers: run, or not run
  std::string data_path;
  for (std::size_t i = 0; i < elements.size(); ++i) {
    const std::string path = layer_path(layers.json(), i);
    const ObjectReader r(ValueReader(elements[i].json(), path, origin));
    const auto name = r.name("name");  // unique: check_unique_names
    const auto type_value = r.required("type", "a layer type such as \"Data\" or \"All2AllDenseEmbedding\"");
    const auto type = type_value.string();
    if (type == hugectr::kDataLayer) {
      if (!data_path.empty())
        type_value.fail_with("only one \"Data\" layer is allowed; " + data_path + " is one already");
      c.data = parse_data_layer(r, name, tops);
      data_path = path;
    } else if (contains(hugectr::runnable_embedding_types(), type)) {
      c.embeddings.push_back(parse_embedding_layer(r, name, type, c.optimizer, c.solver.device));
      tops.push_back({c.embeddings.back().top, r.path_of("top")});
      bottoms.push_back(r.required("bottom", ""));
      slot_lists.push_back(r.optional("slots"));
      table_rank_lists.push_back(r.optional("table_ranks"));
      hot_row_lists.push_back(r.optional("hot_rows"));
      table_node_lists.push_back(r.optional("table_nodes"));
    } else if (contains(hugectr::known_embedding_types(), type)) {
      type_value.fail_with("\"" + type + "\" is a HugeCTR embedding type not runnable in this version; runnable: " +
                           quoted_list(hugectr::runnable_embedding_types()));
    } else if (contains(hugectr::known_dense_layer_types(), type)) {
      dense.push_back({ValueReader(elements[i].json(), path, origin), type});
    } else {
      const auto suggestion = did_you_mean(type, hugectr::all_layer_types());  // "; did you mean "X"?" or ""
      type_value.fail_with("unknown layer type \"" + type + "\"" + (suggestion.empty() ? ";" : suggestion) +
                           " known: " + quoted_list(hugectr::runnable_layer_types()) +
                           " (run by this version); HugeCTR's " + quoted_list(hugectr::not_runnable_layer_types()) +
                           " (not run yet)");
    }
  }
  if (data_path.empty()) layers.fail_with("expected one layer of type \"Data\", got none");
  if (c.embeddings.empty())
    layers.fail_with("expected at least one embedding layer (" + quoted_list(hugectr::runnable_embedding_types()) +
                     "), got none");
  // The dense layers run when lib/model builds every one of their types; otherwise they are
  // recorded, not refused: `run` names them all in one message (a HugeCTR file has many) and runs
  // the embedding part only when asked to (config.hpp, check_runs_whole).
  parse_dense_layers(dense, c, tops);
  // A layer reads the slots of its bottom's sparse input (HugeCTR), or the subset `slots` of them.
  for (std::size_t i = 0; i < c.embeddings.size(); ++i) {
    auto& layer = c.embeddings[i];
    const auto input = std::find_if(c.data.sparse_inputs.begin(), c.data.sparse_inputs.end(),
                                    [&](const auto& in) { return in.top == layer.bottom; });
    if (input == c.data.sparse_inputs.end()) {
      if (c.data.sparse_inputs.size() == 1)
        bottoms[i].fail("the Data layer's sparse top " + describe_json(c.data.sparse_top) + " (" + data_path +
                        ".sparse[0].top)");
      std::vector<std::string> names;
      for (const auto& in : c.data.sparse_inputs) names.push_back(in.top);
      bottoms[i].fail("one of the Data layer's sparse tops " + quoted_list(names) + " (" + data_path + ".sparse)");
    }
    const std::int32_t first = input->first_slot, end = input->first_slot + input->slot_num;
    if (layer.slots.empty()) {
      for (std::int32_t s = first; s < end; ++s) layer.slots.push_back(s);
    } else if (layer.slots.front() < first || layer.slots.back() >= end) {
      slot_lists[i]->fail(c.data.sparse_inputs.size() == 1
                              ? "slot indices below the Data layer's slot_num (" + std::to_string(c.data.slot_num) + ")"
                              : "slot indices of its bottom " + describe_json(layer.bottom) + ": [" +
                                    std::to_string(first) + ", " + std::to_string(end) + ")");
    }
    if (!layer.table_ranks.empty() && layer.table_ranks.size() != layer.slots.size())
      table_rank_lists[i]->fail("one rank per slot of the layer (" + std::to_string(layer.slots.size()) + " ranks)");
    if (!layer.table_nodes.empty() && layer.table_nodes.size() != layer.slots.size())
      table_node_lists[i]->fail("one node per slot of the layer (" + std::to_string(layer.slots.size()) + " nodes)");
    if (hot_row_lists[i] && !hot_row_lists[i]->json().is_array())
      layer.hot_rows.assign(layer.slots.size(), layer.hot_rows.front());
    if (!layer.hot_rows.empty() && layer.hot_rows.size() != layer.slots.size())
      hot_row_lists[i]->fail("one row count per slot of the layer (" + std::to_string(layer.slots.size()) +
                             " counts), or one number for every slot");
  }
  resolve_key_spaces(layers, data_path, c);
  check_unique_tops(tops, origin);
}

}  // namespace embscale::config
