// The memory check before a run allocates (lib/run/memory_check.hpp): the share a rank gets, the
// refusal's content, and this machine's available memory read as the kernel reports it.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "config/config.hpp"
#include "core/error.hpp"
#include "run/memory_check.hpp"

namespace embscale::run {
namespace {

// The embedded default: All2AllDenseEmbedding over 8 slots of 100000 keys, dim 32, fp32, SGD.
config::Config default_config() {
  return config::parse_config(nlohmann::json::parse(config::default_config_text()), "t");
}

std::string refusal(const config::Config& config, int ranks, std::optional<int> rank, double limit) {
  try {
    check_host_memory(config, ranks, rank, MemoryShare{limit, "a test's limit"});
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(MemoryCheck, TheShareIsTheGivenLimitElseTheNodesMemoryOverItsRanks) {
  const NodeMemory node{64.0 * (1 << 30), "MemAvailable of /proc/meminfo"};
  const auto given = memory_share(1 << 20, node, 8);
  EXPECT_EQ(given.bytes, 1 << 20);
  EXPECT_EQ(given.source, "planner.memory_per_rank");
  const auto shared = memory_share(0, node, 8);
  EXPECT_EQ(shared.bytes, 8.0 * (1 << 30));
  EXPECT_EQ(shared.source, "this node's 64 GiB available (MemAvailable of /proc/meminfo) over the 8 ranks it runs");
}

TEST(MemoryCheck, ARankOverItsShareIsRefusedWithTheEstimateTheLayerAndTheLimit) {
  const auto config = default_config();
  // 2 ranks hold 400000 rows of 32 fp32 values each: 51.2e6 bytes.
  EXPECT_EQ(refusal(config, 2, 0, 51.2e6), "");
  const auto message = refusal(config, 2, 1, 51.2e6 - 1);
  EXPECT_TRUE(
      message.starts_with("rank 1 of 2 would allocate 48.8 MiB of host memory for its tables before the "
                          "first step, more than the 48.8 MiB a rank may take (a test's limit); the largest "
                          "is layers[emb1] with 48.8 MiB, static storage"))
      << message;
  EXPECT_NE(message.find("set planner.memory_per_rank"), std::string::npos) << message;
  // Without a rank: the fullest one, on 3 ranks the first (800000 keys: 266667, 266667, 266666).
  EXPECT_NE(refusal(config, 3, std::nullopt, 1e6).find("rank 0 of 3 would allocate 32.6 MiB"), std::string::npos);
}

TEST(MemoryCheck, BytesAreWrittenInTheLargestUnitTheyReach) {
  EXPECT_EQ(format_bytes(100), "100 B");
  EXPECT_EQ(format_bytes(12 * 1024), "12 KiB");
  EXPECT_EQ(format_bytes(1.5 * (1 << 30)), "1.5 GiB");
  EXPECT_EQ(format_bytes(6.4e13), "58.2 TiB");
}

TEST(MemoryCheck, TheNodesAvailableMemoryIsPositiveAndAtMostItsTotal) {
  std::ifstream meminfo("/proc/meminfo");
  if (!meminfo) GTEST_SKIP() << "no /proc/meminfo";
  std::string key;
  double total_kib = 0.0;
  while (meminfo >> key)
    if (key == "MemTotal:") {
      meminfo >> total_kib;
      break;
    }
  const auto node = node_available_memory();
  EXPECT_GT(node.available_bytes, 0.0);
  EXPECT_LE(node.available_bytes, total_kib * 1024.0);
  EXPECT_FALSE(node.source.empty());
}

}  // namespace
}  // namespace embscale::run
