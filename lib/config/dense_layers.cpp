// The dense tower (lib/model): HugeCTR's InnerProduct layers, each followed by the ReLU
// that reads its top, chained from one embedding layer's top. embscale runs such a pair as one
// layer (model::DenseLayer) and adds partition_dim to the InnerProduct. Other dense layers (and an
// InnerProduct that no ReLU follows, or that does not start at an embedding) stay not run.
#include <algorithm>
#include <optional>
#include <string>

#include "config/sections.hpp"

namespace embscale::config {
namespace {

constexpr const char* kInnerProduct = "InnerProduct";
constexpr const char* kReLU = "ReLU";

std::string string_field(const DenseCandidate& candidate, const char* key) {
  const auto& json = candidate.layer.json();
  const auto it = json.find(key);
  return it != json.end() && it->is_string() ? it->get<std::string>() : std::string();
}

// The candidate of `type` whose bottom is `bottom`, or null.
const DenseCandidate* reading(const std::vector<DenseCandidate>& candidates, const char* type,
                              const std::string& bottom) {
  for (const auto& c : candidates)
    if (c.type == type && string_field(c, "bottom") == bottom) return &c;
  return nullptr;
}

DenseLayerConfig parse_pair(const DenseCandidate& inner, const DenseCandidate& relu) {
  const ObjectReader fc(inner.layer);
  fc.only_keys({"name", "type", "bottom", "top", "fc_param", "partition_dim"});
  const ObjectReader param = fc.object("fc_param");
  param.only_keys({"num_output"});
  const ObjectReader r(relu.layer);
  r.only_keys({"name", "type", "bottom", "top"});
  DenseLayerConfig layer;
  layer.name = fc.name("name");
  layer.relu = r.name("name");
  layer.bottom = fc.name("bottom");
  layer.top = r.name("top");
  layer.num_output = param.integer("num_output", IntRange::between(1, 1 << 20));
  layer.partition_dim = static_cast<std::int32_t>(fc.integer_or("partition_dim", 0, IntRange::between(0, 1)));
  return layer;
}

}  // namespace

std::vector<DenseCandidate> parse_dense_tower(const std::vector<DenseCandidate>& candidates, Config& config) {
  std::vector<const DenseCandidate*> taken;
  for (const auto& embedding : config.embeddings) {
    std::string bottom = embedding.top;
    std::vector<DenseLayerConfig> tower;
    const DenseCandidate* first = nullptr;
    while (const DenseCandidate* inner = reading(candidates, kInnerProduct, bottom)) {
      const DenseCandidate* relu = reading(candidates, kReLU, string_field(*inner, "top"));
      if (!relu) break;  // an InnerProduct that no ReLU follows (an output layer) is not run
      if (!first) first = inner;
      tower.push_back(parse_pair(*inner, *relu));
      taken.insert(taken.end(), {inner, relu});
      bottom = tower.back().top;
    }
    if (tower.empty()) continue;
    if (!embedding.storage.table.training)
      first->layer.fail_with("the dense tower trains (SGD); its input layers[" + embedding.name +
                             "] is in evaluation mode (storage.training false)");
    if (!config.dense.empty())
      first->layer.fail_with("one dense tower per run: layers[" + config.dense.front().name +
                             "] already reads layers[" + config.dense_input + "]; this one reads layers[" +
                             embedding.name + "]");
    config.dense = std::move(tower);
    config.dense_input = embedding.name;
  }
  std::vector<DenseCandidate> rest;
  for (const auto& c : candidates)
    if (std::find(taken.begin(), taken.end(), &c) == taken.end()) rest.push_back(c);
  return rest;
}

}  // namespace embscale::config
