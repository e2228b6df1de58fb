// The dense layers (lib/model builds them; lib/model/layers/ reads each type's parameters):
// here only what every layer has, its name, type, bottoms and tops, and where its tensors come
// from. A HugeCTR file lists each layer after the layers whose tops it reads, so a bottom must be
// a tensor named before it: the Data layer's, an embedding layer's top, or an earlier dense
// layer's top (which also rules out cycles).
#include <algorithm>
#include <string>

#include "config/hugectr_names.hpp"
#include "config/sections.hpp"
#include "core/error.hpp"

namespace embscale::config {
namespace {

// "bottom" / "top": one name or a non-empty list of names.
std::vector<std::string> names(const ObjectReader& layer, const char* key) {
  const auto value = layer.required(key, "a tensor name or a list of them");
  if (value.json().is_string()) return {value.name()};
  std::vector<std::string> out;
  for (const auto& element : value.array(1, "a tensor name or a non-empty list of them")) out.push_back(element.name());
  return out;
}

bool defined(const std::vector<TensorName>& tops, const std::string& name) {
  return std::any_of(tops.begin(), tops.end(), [&](const TensorName& t) { return t.name == name; });
}

}  // namespace

void parse_dense_layers(const std::vector<DenseCandidate>& candidates, Config& config, std::vector<TensorName>& tops) {
  std::vector<DenseLayerNode> nodes;
  bool all_built = true;
  for (const auto& candidate : candidates) {
    const ObjectReader layer(candidate.layer);
    DenseLayerNode node;
    node.name = layer.name("name");
    node.type = candidate.type;
    node.path = layer.path();
    node.json = candidate.layer.json();
    node.bottoms = names(layer, "bottom");
    for (std::size_t b = 0; b < node.bottoms.size(); ++b)
      if (!defined(tops, node.bottoms[b])) {
        std::vector<std::string> known;
        for (const auto& t : tops) known.push_back(t.name);
        const std::string at = layer.path_of("bottom") + (node.bottoms.size() > 1 ? "[" + std::to_string(b) + "]" : "");
        throw InputError(config.origin + ": " + at + ": expected a tensor named before this layer (" +
                         quoted_list(known) + "), got \"" + node.bottoms[b] + "\"" +
                         did_you_mean(node.bottoms[b], known));
      }
    node.tops = names(layer, "top");
    for (const auto& top : node.tops) tops.push_back({top, layer.path_of("top")});
    const auto& built = hugectr::built_dense_layer_types();
    if (std::find(built.begin(), built.end(), node.type) == built.end()) {
      all_built = false;
      config.not_run.push_back(node.path + " (\"" + node.type + "\")");
    }
    nodes.push_back(std::move(node));
  }
  if (all_built) config.dense_layers = std::move(nodes);
}

}  // namespace embscale::config
