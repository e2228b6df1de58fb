#include "plan/planned_config.hpp"

#include <algorithm>
#include <string>

namespace embscale::plan {

nlohmann::json planned_config_json(const config::Config& config, std::vector<PlannedLayer>& layers) {
  nlohmann::json planned = config.source;
  auto& json_layers = planned["layers"];
  nlohmann::json rewritten = nlohmann::json::array();
  std::vector<std::string> names;
  for (const auto& layer : json_layers)
    if (layer.contains("name") && layer["name"].is_string()) names.push_back(layer["name"].get<std::string>());
  for (const auto& layer : json_layers) {
    const auto name = layer.value("name", std::string());
    std::vector<PlannedLayer*> parts;
    for (auto& part : layers)
      if (part.planned && part.source_layer == name) parts.push_back(&part);
    if (parts.empty()) {
      rewritten.push_back(layer);
      continue;
    }
    for (auto* part : parts) {
      std::string part_name = parts.size() == 1 ? name : name + "_" + part->scheme;
      while (parts.size() > 1 && std::count(names.begin(), names.end(), part_name) > 0) part_name += "_";
      part->name = part_name;
      nlohmann::json out = layer;
      out["name"] = part_name;
      out["top"] = parts.size() == 1 ? layer.value("top", part_name) : part_name;
      out["type"] = "ShardedEmbedding";
      out["sharding"] = part->scheme;
      out["slots"] = part->slots;
      out.erase("table_ranks");
      if (!part->table_ranks.empty()) out["table_ranks"] = part->table_ranks;
      out.erase("hot_rows");
      if (!part->hot_rows.empty()) out["hot_rows"] = part->hot_rows;
      out.erase("table_nodes");
      out.erase("ranks_per_node");
      if (!part->table_nodes.empty()) {
        out["table_nodes"] = part->table_nodes;
        out["ranks_per_node"] = part->ranks_per_node;  // the nodes it planned for, not the launch's hosts
      }
      rewritten.push_back(std::move(out));
    }
  }
  for (auto& part : layers)
    if (!part.planned) part.name = part.source_layer;
  json_layers = std::move(rewritten);
  if (planned.contains("planner")) planned["planner"].erase("all_layers");  // its layers are planned now
  return planned;
}

bool has_auto_layers(const config::Config& config) {
  if (config.planner && config.planner->all_layers) return true;
  return std::any_of(config.embeddings.begin(), config.embeddings.end(),
                     [](const config::EmbeddingLayer& layer) { return config::is_auto_sharding(layer.sharding); });
}

config::Config planned_config(const config::Config& config, const ShardingPlan& plan) {
  auto planned = config::parse_config(plan.config, "the sharding plan of " + std::to_string(plan.ranks) + " ranks");
  planned.directory = config.directory;
  planned.solver.batchsize = config.solver.batchsize;  // resolved for the ranks already
  return planned;
}

std::optional<ShardingPlan> plan_for_run(config::Config& config, int ranks) {
  const bool planned = has_auto_layers(config);
  if (!planned && !config.planner) return std::nullopt;
  auto plan = plan_sharding(config, ranks);
  if (planned) config = planned_config(config, plan);
  return plan;
}

}  // namespace embscale::plan
