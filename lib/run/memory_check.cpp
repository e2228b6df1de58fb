#include "run/memory_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>

#include "core/error.hpp"
#include "embedding/memory_need.hpp"
#include "run/parameter_server_run.hpp"

namespace embscale::run {
namespace {

// A cgroup file's one number; nullopt for "max" (no limit) or a file that is not there.
std::optional<double> read_cgroup_number(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string word;
  if (!(in >> word) || word == "max") return std::nullopt;
  try {
    return std::stod(word);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// What the memory cgroups of this process leave, the least over its hierarchy; nullopt: no limit.
std::optional<double> cgroup_remaining(std::string& where) {
  std::ifstream self("/proc/self/cgroup");
  std::string line;
  std::optional<double> least;
  const auto consider = [&](const std::filesystem::path& dir, const char* limit_name, const char* usage_name) {
    const auto limit = read_cgroup_number(dir / limit_name);
    const auto usage = read_cgroup_number(dir / usage_name);
    // cgroup v1 reports "no limit" as a huge number (PAGE_COUNTER_MAX pages).
    if (!limit || *limit >= 1e18) return;
    const double left = std::max(0.0, *limit - usage.value_or(0.0));
    if (!least || left < *least) {
      least = left;
      where = (dir / limit_name).string();
    }
  };
  while (std::getline(self, line)) {
    // "<id>:<controllers>:<path>": v2 has id 0 and no controllers; v1 names "memory".
    const auto first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::filesystem::path path = line.substr(second + 1);
    const bool v2 = controllers.empty();
    if (!v2 && controllers.find("memory") == std::string::npos) continue;
    const std::filesystem::path root = v2 ? "/sys/fs/cgroup" : "/sys/fs/cgroup/memory";
    // From the process's cgroup up to the root: a parent's limit binds its children.
    for (std::filesystem::path p = path.relative_path();; p = p.parent_path()) {
      if (v2) consider(root / p, "memory.max", "memory.current");
      else consider(root / p, "memory.limit_in_bytes", "memory.usage_in_bytes");
      if (p.empty()) break;
    }
  }
  return least;
}

}  // namespace

std::string format_bytes(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int unit = 0;
  while (std::abs(bytes) >= 1024.0 && unit < 6) {
    bytes /= 1024.0;
    ++unit;
  }
  char text[32];
  std::snprintf(text, sizeof text, unit == 0 ? "%.0f %s" : "%.3g %s", bytes, kUnits[unit]);
  return text;
}

NodeMemory node_available_memory() {
  NodeMemory node;
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  double kib = -1.0;
  while (meminfo >> key) {
    if (key == "MemAvailable:") {
      meminfo >> kib;
      break;
    }
    meminfo.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  node.available_bytes = kib >= 0.0 ? kib * 1024.0 : std::numeric_limits<double>::infinity();
  node.source = kib >= 0.0 ? "MemAvailable of /proc/meminfo" : "no /proc/meminfo: unchecked";
  std::string where;
  if (const auto left = cgroup_remaining(where); left && *left < node.available_bytes) {
    node.available_bytes = *left;
    node.source = "what the memory cgroup leaves (" + where + ")";
  }
  return node;
}

MemoryShare memory_share(std::int64_t given_per_rank, const NodeMemory& node, int ranks_on_node) {
  EMBSCALE_EXPECTS(ranks_on_node >= 1, "a node runs at least one rank");
  if (given_per_rank > 0) return {static_cast<double>(given_per_rank), "planner.memory_per_rank"};
  return {node.available_bytes / ranks_on_node, "this node's " + format_bytes(node.available_bytes) + " available (" +
                                                    node.source + ") over the " + std::to_string(ranks_on_node) +
                                                    (ranks_on_node == 1 ? " rank" : " ranks") + " it runs"};
}

void check_host_memory(const config::Config& config, int ranks, std::optional<int> only_rank,
                       const MemoryShare& share) {
  auto needs = embedding::host_memory_at_start(config, config.data.slot_size_array, ranks);
  if (config::runs_on_parameter_servers(config)) {
    const RunRoles roles = check_parameter_server_run(config, ranks);
    auto served =
        embedding::parameter_server_memory_at_start(config, config.data.slot_size_array, ranks, roles.servers);
    needs.insert(needs.end(), std::make_move_iterator(served.begin()), std::make_move_iterator(served.end()));
  }
  const auto total_of = [&](std::size_t r) {
    double total = 0.0;
    for (const auto& need : needs) total += need.bytes[r];
    return total;
  };
  std::size_t at = only_rank ? static_cast<std::size_t>(*only_rank) : 0;
  double total = total_of(at);
  if (!only_rank) {
    for (std::size_t r = 1; r < static_cast<std::size_t>(ranks); ++r)
      if (const double t = total_of(r); t > total) {
        total = t;
        at = r;
      }
  }
  if (total <= share.bytes) return;
  const int rank = static_cast<int>(at);
  const embedding::LayerMemoryNeed* largest = nullptr;
  for (const auto& need : needs)
    if (!largest || need.bytes[at] > largest->bytes[at]) largest = &need;
  std::string message = "rank " + std::to_string(rank) + " of " + std::to_string(ranks) + " would allocate " +
                        format_bytes(total) + " of host memory for its tables before the first step, more than the " +
                        format_bytes(share.bytes) + " a rank may take (" + share.source + ")";
  if (largest)
    message +=
        "; the largest is " + largest->path + " with " + format_bytes(largest->bytes[at]) + ", " + largest->sized_by;
  message +=
      ". Run on more ranks or nodes, shrink the table, or set planner.memory_per_rank to the bytes a rank "
      "may take";
  throw InputError(message);
}

}  // namespace embscale::run
