// Hardware descriptions (config/hardware.hpp): a complete one is read field by field; what is
// missing, out of range or unknown is bad input naming the file and the field.
#include "config/hardware.hpp"

#include <gtest/gtest.h>

#include <string>

#include "core/error.hpp"

namespace embscale::config {
namespace {

std::string description(const std::string& device_extra = "", const std::string& inter_node = "") {
  return R"({
    "hardware_version": 1,
    "name": "two nodes of four",
    "device": {"model": "G1", "memory_bytes": 1000000, "memory_bandwidth": 2e12, "source": "datasheet")" +
         device_extra + R"(},
    "node": {"devices": 4, "host_memory_bytes": 5000000, "host_link": {"bandwidth": 6.4e10, "source": "PCIe"},
             "source": "datasheet"},
    "links": {
      "intra_node": {"bandwidth": 4e11, "latency_seconds": 2e-6, "source": "measured"},
      "inter_node": )" +
         (inter_node.empty() ? R"({"bandwidth": 5e10, "latency_seconds": 8e-6, "source": "measured"})" : inter_node) +
         R"(
    },
    "costs": {"seconds_per_key": 1e-10, "seconds_per_row": 2e-10, "source": "measured"}
  })";
}

std::string error_of(const std::string& text) {
  try {
    parse_hardware(text, "h.json");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(HardwareDescription, ReadsEveryField) {
  const HardwareDescription h = parse_hardware(description(), "h.json");
  EXPECT_EQ(h.origin, "h.json");
  EXPECT_EQ(h.name, "two nodes of four");
  EXPECT_EQ(h.device_model, "G1");
  EXPECT_EQ(h.device_memory_bytes, 1000000);
  EXPECT_DOUBLE_EQ(h.device_memory_bandwidth, 2e12);
  EXPECT_EQ(h.devices_per_node, 4);
  EXPECT_EQ(h.host_memory_bytes, 5000000);
  EXPECT_DOUBLE_EQ(h.host_link.bandwidth, 6.4e10);
  EXPECT_EQ(h.host_link.source, "PCIe");
  EXPECT_DOUBLE_EQ(h.intra_node.bandwidth, 4e11);
  EXPECT_DOUBLE_EQ(h.intra_node.latency_seconds, 2e-6);
  EXPECT_DOUBLE_EQ(h.inter_node.bandwidth, 5e10);
  EXPECT_DOUBLE_EQ(h.inter_node.latency_seconds, 8e-6);
  EXPECT_EQ(h.seconds_per_key, 1e-10);
  EXPECT_EQ(h.seconds_per_row, 2e-10);
  EXPECT_EQ(h.costs_source, "measured");
}

TEST(HardwareDescription, BadFieldsAreNamed) {
  // Every block states its source.
  std::string text = description();
  const std::string device_source = R"(, "source": "datasheet")";
  text.replace(text.find(device_source), device_source.size(), "");
  EXPECT_NE(error_of(text).find("h.json: device.source"), std::string::npos) << error_of(text);
  EXPECT_NE(error_of(description("", R"({"bandwidth": -1, "latency_seconds": 0, "source": "x"})"))
                .find("links.inter_node.bandwidth"),
            std::string::npos);
  EXPECT_NE(error_of(description("", R"({"bandwidth": 1e9, "latency_seconds": 5, "source": "x"})"))
                .find("links.inter_node.latency_seconds"),
            std::string::npos);
  EXPECT_NE(error_of(description(R"(, "memory_gb": 80)")).find("memory_gb"), std::string::npos);
  std::string version = description();
  const std::string one = R"("hardware_version": 1)";
  version.replace(version.find(one), one.size(), R"("hardware_version": 2)");
  EXPECT_NE(error_of(version).find("hardware_version"), std::string::npos);
  EXPECT_NE(error_of("{").find("h.json"), std::string::npos);
}

}  // namespace
}  // namespace embscale::config
