#include "config/hardware.hpp"

#include "config/config.hpp"
#include "config/json_reader.hpp"
#include "config/json_text.hpp"

namespace embscale::config {
namespace {

constexpr std::int64_t kHardwareVersion = 1;
constexpr double kMaxBandwidth = 1e15;  // bytes per second: a petabyte a second is a unit mistake
constexpr double kMaxLatency = 1.0;     // a second per collective is a unit mistake
constexpr double kMaxSeconds = 1.0;     // per key or row
constexpr std::int64_t kMaxBytes = std::int64_t{1} << 56;

std::string source_of(const ObjectReader& r) { return r.name("source"); }

LinkClass parse_link(const ObjectReader& r) {
  r.only_keys({"bandwidth", "latency_seconds", "source"});
  LinkClass link;
  link.bandwidth = r.number("bandwidth", NumberRange{0.0, kMaxBandwidth, true});
  link.latency_seconds = r.number("latency_seconds", NumberRange::between(0.0, kMaxLatency));
  link.source = source_of(r);
  return link;
}

}  // namespace

HardwareDescription parse_hardware(const std::string& text, const std::string& origin) {
  const nlohmann::json json = parse_json_text(text, origin);
  const ValueReader root(json, "", origin);
  const ObjectReader top(root);
  top.only_keys({"hardware_version", "name", "device", "node", "links", "costs"});
  top.integer("hardware_version", IntRange::between(kHardwareVersion, kHardwareVersion));
  HardwareDescription h;
  h.origin = origin;
  h.name = top.name("name");

  const ObjectReader device = top.object("device");
  device.only_keys({"model", "memory_bytes", "memory_bandwidth", "source"});
  h.device_model = device.name("model");
  h.device_memory_bytes = device.integer("memory_bytes", IntRange::between(1, kMaxBytes));
  h.device_memory_bandwidth = device.number("memory_bandwidth", NumberRange{0.0, kMaxBandwidth, true});
  h.device_source = source_of(device);

  const ObjectReader node = top.object("node");
  node.only_keys({"devices", "host_memory_bytes", "host_link", "source"});
  h.devices_per_node = node.integer("devices", IntRange::between(1, 1 << 16));
  h.host_memory_bytes = node.integer_or("host_memory_bytes", 0, IntRange::between(0, kMaxBytes));
  if (const auto link = node.optional("host_link")) {
    const ObjectReader host_link(*link);
    host_link.only_keys({"bandwidth", "source"});
    h.host_link.bandwidth = host_link.number("bandwidth", NumberRange{0.0, kMaxBandwidth, true});
    h.host_link.source = source_of(host_link);
  }
  h.node_source = source_of(node);

  const ObjectReader links = top.object("links");
  links.only_keys({"intra_node", "inter_node"});
  h.intra_node = parse_link(links.object("intra_node"));
  h.inter_node = parse_link(links.object("inter_node"));

  if (top.has("costs")) {
    const ObjectReader costs = top.object("costs");
    costs.only_keys({"seconds_per_key", "seconds_per_row", "source"});
    h.seconds_per_key = costs.number("seconds_per_key", NumberRange::between(0.0, kMaxSeconds));
    h.seconds_per_row = costs.number("seconds_per_row", NumberRange::between(0.0, kMaxSeconds));
    h.costs_source = source_of(costs);
  }
  return h;
}

HardwareDescription read_hardware(const std::filesystem::path& path) {
  return parse_hardware(read_config_text(path), path.string());
}

}  // namespace embscale::config
