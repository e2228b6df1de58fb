#include "plan/plan_report.hpp"

#include <algorithm>
#include <cstdio>
#include <string>

namespace embscale::plan {
namespace {

std::string fixed(double value, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, value);
  return text;
}

template <class Integer> std::string joined(const std::vector<Integer>& values) {
  std::string out;
  for (const auto v : values) out += (out.empty() ? "" : ",") + std::to_string(v);
  return out;
}

double mib(double bytes) { return bytes / double(1 << 20); }

// max / mean of the ranks' values (1 = balanced; 0 when all are 0).
double imbalance(const std::vector<double>& values) {
  double sum = 0.0, top = 0.0;
  for (const auto v : values) {
    sum += v;
    top = std::max(top, v);
  }
  return sum > 0.0 ? top / (sum / static_cast<double>(values.size())) : 0.0;
}

std::vector<double> lookups_of(const PlannedLayer& layer) {
  std::vector<double> out;
  for (const auto& load : layer.loads) out.push_back(load.lookups());
  return out;
}

}  // namespace

void print_capacity(std::ostream& out, const CapacityAnswer& answer) {
  out << "capacity: " << answer.ranks << " ranks";
  if (answer.devices_per_node > 0)
    out << " (" << (answer.ranks + answer.devices_per_node - 1) / answer.devices_per_node << " nodes of "
        << answer.devices_per_node << ")";
  out << ", the fewest that meet the targets (" << fixed(mib(static_cast<double>(answer.memory_per_rank)), 1)
      << " MiB per rank"
      << "; " << answer.candidates.size() << " counts tried)\n";
  out << "   ranks  predicted step (ms)  fullest rank (MiB)  verdict\n";
  std::vector<CapacityCandidate> sorted = answer.candidates;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.ranks < b.ranks; });
  for (const auto& c : sorted) {
    char line[96];
    std::snprintf(line, sizeof line, "%8d  %19s  %18s  ", c.ranks,
                  c.step_seconds > 0 ? fixed(c.step_seconds * 1e3, 3).c_str() : "-",
                  c.memory_bytes > 0 ? fixed(mib(c.memory_bytes), 1).c_str() : "-");
    out << line << (c.kept ? "meets the targets" : "rejected: " + c.reason) << '\n';
  }
  out << '\n';
}

nlohmann::json capacity_json(const CapacityAnswer& answer) {
  nlohmann::json candidates = nlohmann::json::array();
  for (const auto& c : answer.candidates)
    candidates.push_back({{"ranks", c.ranks},
                          {"kept", c.kept},
                          {"step_seconds", c.step_seconds},
                          {"memory_bytes", c.memory_bytes},
                          {"reason", c.reason}});
  return {{"ranks", answer.ranks},
          {"devices_per_node", answer.devices_per_node},
          {"memory_per_rank", answer.memory_per_rank},
          {"candidates", candidates}};
}

namespace {

// A two-tier layer's fast tier: the model, the capacity, and per rank the hit rate, the misses
// and the slow tier's rows and traffic (the ranks alike under key modulo: one line then).
void print_fast_tier(std::ostream& out, const PlannedLayer& layer) {
  const auto& first = layer.fast_tier.front();
  out << "  fast tier: " << to_string(first.retention) << " model, "
      << (first.retention == TierRetention::kHashShare ? "a share of " + fixed(first.capacity, 3) + " of the keys"
                                                       : fixed(first.capacity, 0) + " rows per rank");
  if (!layer.tier_note.empty()) out << " (" << layer.tier_note << ")";
  out << "\n  rank   hit rate   lookups/step   misses/step   slow-tier MiB/step   slow-tier MiB held\n";
  for (std::size_t r = 0; r < layer.fast_tier.size(); ++r) {
    const auto& p = layer.fast_tier[r];
    char line[160];
    std::snprintf(line, sizeof line, "  %4zu %10.4f %14.0f %13.0f %20.2f %20.1f\n", r, p.hit_rate, p.lookups, p.misses,
                  mib(layer.work[r].slow_tier_bytes), mib(layer.slow_memory_bytes[r]));
    out << line;
  }
}

}  // namespace

void print_plan(std::ostream& out, const ShardingPlan& plan) {
  out << "sharding plan for " << plan.ranks << " ranks (" << plan.policy << "): predicted step "
      << fixed(plan.step_seconds * 1e3, 3) << " ms; memory limit "
      << fixed(mib(static_cast<double>(plan.memory_per_rank)), 0) << " MiB per rank\n";
  out << "costs: " << plan.cost.seconds_per_key * 1e9 << " ns/key, " << plan.cost.seconds_per_row * 1e9 << " ns/row, "
      << plan.cost.seconds_per_byte * 1e9 << " ns/byte, " << plan.cost.seconds_per_comm_byte * 1e9
      << " ns/byte sent or received, " << plan.cost.seconds_per_collective * 1e6 << " us/collective, "
      << plan.cost.seconds_per_slow_byte * 1e9 << " ns/byte to or from a slow tier\n";
  if (!plan.hardware.empty()) {
    out << "hardware: " << plan.hardware;
    if (plan.default_compute_costs)
      out << "; its keys and rows cost the development VM's calibration (the description measured none)";
    out << '\n';
  }
  if (!plan.measured_slots.empty()) {
    // Slots grouped by reason: "slots 0,1,2: multi-hot companions make its keys dependent".
    out << "loads measured on " << plan.measured_batches << " batches of the data (no analytic model):";
    std::vector<bool> said(plan.measured_slots.size(), false);
    for (std::size_t i = 0; i < plan.measured_slots.size(); ++i) {
      if (said[i]) continue;
      std::vector<std::int32_t> slots;
      for (std::size_t j = i; j < plan.measured_slots.size(); ++j) {
        if (plan.measured_reasons[j] != plan.measured_reasons[i]) continue;
        slots.push_back(plan.measured_slots[j]);
        said[j] = true;
      }
      out << (i ? "; " : " ") << (slots.size() > 1 ? "slots " : "slot ") << joined(slots) << " ("
          << plan.measured_reasons[i] << ")";
    }
    out << "\n";
  }
  out << "\n";
  for (const auto& layer : plan.layers) {
    out << layer.name << (layer.planned ? "" : " (fixed)") << ": " << layer.scheme << ", slots " << joined(layer.slots);
    if (!layer.table_ranks.empty()) out << " on ranks " << joined(layer.table_ranks);
    if (!layer.hot_rows.empty()) out << ", hot rows " << joined(layer.hot_rows);
    if (!layer.table_nodes.empty())
      out << " on nodes " << joined(layer.table_nodes) << " of " << layer.ranks_per_node << " ranks";
    out << "; predicted " << fixed(layer.step_seconds * 1e3, 3) << " ms, lookup imbalance "
        << fixed(imbalance(lookups_of(layer)), 2) << "\n";
    out << "  rank      pairs    lookups   sent+recv MiB   memory MiB   predicted ms\n";
    for (std::size_t r = 0; r < layer.loads.size(); ++r) {
      char line[160];
      std::snprintf(line, sizeof line, "  %4zu %10.0f %10.0f %15.2f %12.1f %14.3f\n", r, layer.loads[r].pairs,
                    layer.loads[r].lookups(), mib(layer.work[r].comm_bytes), mib(layer.memory_bytes[r]),
                    layer.seconds[r] * 1e3);
      out << line;
    }
    if (!layer.fast_tier.empty()) print_fast_tier(out, layer);
  }
}

nlohmann::json plan_json(const ShardingPlan& plan) {
  nlohmann::json layers = nlohmann::json::array();
  for (const auto& layer : plan.layers) {
    nlohmann::json ranks = nlohmann::json::array();
    for (std::size_t r = 0; r < layer.loads.size(); ++r)
      ranks.push_back({{"pairs", layer.loads[r].pairs},
                       {"lookups", layer.loads[r].lookups()},
                       {"key_ops", layer.work[r].key_ops},
                       {"row_ops", layer.work[r].row_ops},
                       {"memory_traffic_bytes", layer.work[r].memory_bytes},
                       {"comm_bytes", layer.work[r].comm_bytes},
                       {"memory_bytes", layer.memory_bytes[r]},
                       {"seconds", layer.seconds[r]}});
    if (!layer.fast_tier.empty()) {
      for (std::size_t r = 0; r < layer.fast_tier.size(); ++r) {
        const auto& p = layer.fast_tier[r];
        ranks[r]["fast_tier"] = {{"hit_rate", p.hit_rate},
                                 {"lookups", p.lookups},
                                 {"misses", p.misses},
                                 {"held_keys", p.held_keys},
                                 {"slow_tier_traffic_bytes", layer.work[r].slow_tier_bytes},
                                 {"slow_memory_bytes", layer.slow_memory_bytes[r]}};
      }
    }
    nlohmann::json entry = {{"name", layer.name},
                            {"from", layer.source_layer},
                            {"scheme", layer.scheme},
                            {"planned", layer.planned},
                            {"slots", layer.slots},
                            {"step_seconds", layer.step_seconds},
                            {"collectives", layer.collectives},
                            {"lookup_imbalance", imbalance(lookups_of(layer))},
                            {"ranks", ranks}};
    if (!layer.table_ranks.empty()) entry["table_ranks"] = layer.table_ranks;
    if (!layer.hot_rows.empty()) entry["hot_rows"] = layer.hot_rows;
    if (!layer.table_nodes.empty()) {
      entry["table_nodes"] = layer.table_nodes;
      entry["ranks_per_node"] = layer.ranks_per_node;
    }
    if (!layer.fast_tier.empty()) {
      const auto& first = layer.fast_tier.front();
      entry["fast_tier"] = {
          {"model", to_string(first.retention)}, {"capacity", first.capacity}, {"note", layer.tier_note}};
    }
    layers.push_back(std::move(entry));
  }
  return {{"ranks", plan.ranks},
          {"policy", plan.policy},
          {"step_seconds", plan.step_seconds},
          {"memory_per_rank", plan.memory_per_rank},
          {"hardware", plan.hardware},
          {"default_compute_costs", plan.default_compute_costs},
          {"cost",
           {{"seconds_per_key", plan.cost.seconds_per_key},
            {"seconds_per_row", plan.cost.seconds_per_row},
            {"seconds_per_byte", plan.cost.seconds_per_byte},
            {"seconds_per_comm_byte", plan.cost.seconds_per_comm_byte},
            {"seconds_per_collective", plan.cost.seconds_per_collective},
            {"seconds_per_slow_byte", plan.cost.seconds_per_slow_byte}}},
          {"layers", layers},
          {"measured_slots", plan.measured_slots},
          {"measured_batches", plan.measured_batches},
          {"config", plan.config}};
}

report::ReportTable plan_loads_table(const ShardingPlan& plan) {
  report::ReportTable table;
  table.columns = {"layer", "rank", "pairs", "lookups", "seconds", "memory_bytes", "comm_bytes"};
  table.meaning =
      "the planner's prediction per step for one layer (its index in the run attribute sharding_plan's "
      "layers) and rank: (key, bag) pairs handled as owner, distinct keys looked up, time, bytes held, "
      "bytes sent plus received";
  for (std::size_t l = 0; l < plan.layers.size(); ++l) {
    const auto& layer = plan.layers[l];
    for (std::size_t r = 0; r < layer.loads.size(); ++r)
      table.values.insert(table.values.end(), {static_cast<double>(l), static_cast<double>(r), layer.loads[r].pairs,
                                               layer.loads[r].lookups(), layer.seconds[r], layer.memory_bytes[r],
                                               layer.work[r].comm_bytes});
  }
  return table;
}

}  // namespace embscale::plan
