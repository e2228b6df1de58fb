// Hardware descriptions for the planner's tests: one of a device and two links, and a file that
// holds it for a config's planner.hardware (written to the temporary directory, removed with the
// object, so that a failed assertion leaves nothing behind).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "config/hardware.hpp"

namespace embscale::plan::testing {

// `devices` devices a node, 1 GiB at 2 TB/s each, links of the given bandwidths (bytes/s).
inline config::HardwareDescription two_links(double inter_bandwidth = 5e10, std::int64_t devices = 8,
                                             double intra_bandwidth = 4e11) {
  config::HardwareDescription h;
  h.name = "test";
  h.device_memory_bytes = 1 << 30;
  h.device_memory_bandwidth = 2e12;
  h.devices_per_node = devices;
  h.intra_node = {intra_bandwidth, 2e-6, "test"};
  h.inter_node = {inter_bandwidth, 9e-6, "test"};
  return h;
}

class HardwareFile {
 public:
  // `name` tells the files of one test apart.
  HardwareFile(const std::string& name, const config::HardwareDescription& h)
      : path_((std::filesystem::temp_directory_path() /
               ("embscale_test_hardware_" + std::to_string(::getpid()) + "_" + name + ".json"))
                  .string()) {
    std::ofstream out(path_);
    out << R"({"hardware_version": 1, "name": ")" << h.name << R"(",
    "device": {"model": "G", "memory_bytes": )"
        << h.device_memory_bytes << R"(, "memory_bandwidth": )" << h.device_memory_bandwidth << R"(, "source": "t"},
    "node": {"devices": )"
        << h.devices_per_node << R"(, "source": "t"},
    "links": {"intra_node": {"bandwidth": )"
        << h.intra_node.bandwidth << R"(, "latency_seconds": )" << h.intra_node.latency_seconds << R"(, "source": "t"},
              "inter_node": {"bandwidth": )"
        << h.inter_node.bandwidth << R"(, "latency_seconds": )" << h.inter_node.latency_seconds
        << R"(, "source": "t"}}})";
  }
  ~HardwareFile() { std::filesystem::remove(path_); }
  HardwareFile(const HardwareFile&) = delete;
  HardwareFile& operator=(const HardwareFile&) = delete;

  const std::string& path() const noexcept { return path_; }

 private:
  std::string path_;
};

}  // namespace embscale::plan::testing
