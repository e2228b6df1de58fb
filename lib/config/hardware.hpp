// A hardware description: what the capacity planner (lib/plan) knows of the machines a plan is
// for, read from its own file (examples in bench/hardware/, fields in lib/config/README.md,
// "Hardware descriptions"). Every figure block carries its `source` (a datasheet, a measurement
// and its command), so that a plan's assumptions can be checked.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

namespace embscale::config {

// A class of link between two devices: inside a node (NVLink, shared memory) or across nodes
// (InfiniBand, Ethernet).
struct LinkClass {
  double bandwidth = 0.0;        // bytes per second, each direction, per device
  double latency_seconds = 0.0;  // a collective call's fixed cost over this link
  std::string source;
};

struct HardwareDescription {
  std::string origin;  // the file
  std::string name;
  // Per device (a rank): its fast memory (a GPU's HBM, a CPU rank's share of DRAM).
  std::string device_model;
  std::int64_t device_memory_bytes = 0;
  double device_memory_bandwidth = 0.0;  // bytes per second
  std::string device_source;
  // Per node.
  std::int64_t devices_per_node = 1;
  std::int64_t host_memory_bytes = 0;  // 0: not given
  // Each device's link to host memory (PCIe, NVLink-C2C), which a two-tier table's slow tier is
  // read over; bandwidth 0: not given.
  LinkClass host_link;
  std::string node_source;
  LinkClass intra_node, inter_node;
  // Measured per-key and per-row costs on this hardware, when there are any.
  std::optional<double> seconds_per_key, seconds_per_row;
  std::string costs_source;
};

// The description in `path`; InputError naming the file, the field and what was expected.
HardwareDescription read_hardware(const std::filesystem::path& path);
// The same from text, `origin` naming it in messages.
HardwareDescription parse_hardware(const std::string& text, const std::string& origin);

}  // namespace embscale::config
