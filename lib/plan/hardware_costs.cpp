#include "plan/hardware_costs.hpp"

#include <algorithm>
#include <filesystem>

namespace embscale::plan {

double intra_node_share(int ranks, std::int64_t devices_per_node) {
  if (ranks <= 1) return 1.0;
  const double inside = static_cast<double>(std::min<std::int64_t>(ranks, devices_per_node)) - 1.0;
  return inside / (static_cast<double>(ranks) - 1.0);
}

CostParameters hardware_costs(const config::HardwareDescription& hardware, int ranks, const CostParameters& fallback) {
  CostParameters cost = fallback;
  cost.seconds_per_key = hardware.seconds_per_key.value_or(fallback.seconds_per_key);
  cost.seconds_per_row = hardware.seconds_per_row.value_or(fallback.seconds_per_row);
  cost.seconds_per_byte = 1.0 / hardware.device_memory_bandwidth;
  if (hardware.host_link.bandwidth > 0.0) cost.seconds_per_slow_byte = 1.0 / hardware.host_link.bandwidth;
  const double inside = intra_node_share(ranks, hardware.devices_per_node);
  cost.seconds_per_comm_byte =
      0.5 * (inside / hardware.intra_node.bandwidth + (1.0 - inside) / hardware.inter_node.bandwidth);
  cost.seconds_per_intra_node_byte = 0.5 / hardware.intra_node.bandwidth;
  cost.seconds_per_inter_node_byte = 0.5 / hardware.inter_node.bandwidth;
  cost.seconds_per_collective = ranks > hardware.devices_per_node
                                    ? std::max(hardware.intra_node.latency_seconds, hardware.inter_node.latency_seconds)
                                    : hardware.intra_node.latency_seconds;
  return cost;
}

std::optional<config::HardwareDescription> plan_hardware(const config::Config& config) {
  if (!config.planner || config.planner->hardware.empty()) return std::nullopt;
  std::filesystem::path path = config.planner->hardware;
  if (path.is_relative() && !config.directory.empty()) path = std::filesystem::path(config.directory) / path;
  return config::read_hardware(path);
}

}  // namespace embscale::plan
