// The costs a hardware description gives a plan (plan/hardware_costs.hpp), in closed form: the
// share of a rank's peers inside its node, a byte's cost weighted over the two links, the
// collective's latency by the links it crosses; and through the planner: the device's memory is
// the limit, a planner setting wins over the description, and a faster link never raises the
// predicted step.
#include "plan/hardware_costs.hpp"

#include <gtest/gtest.h>

#include <string>

#include "plan/hardware_test_support.hpp"
#include "plan/planner.hpp"

namespace embscale::plan {
namespace {

using testing::HardwareFile;
using testing::two_links;

TEST(HardwareCosts, TheShareOfPeersInsideTheNode) {
  EXPECT_DOUBLE_EQ(intra_node_share(1, 8), 1.0);
  EXPECT_DOUBLE_EQ(intra_node_share(8, 8), 1.0);
  EXPECT_DOUBLE_EQ(intra_node_share(4, 8), 1.0);
  EXPECT_DOUBLE_EQ(intra_node_share(9, 8), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(intra_node_share(16, 8), 7.0 / 15.0);
  EXPECT_DOUBLE_EQ(intra_node_share(1024, 1), 0.0);
}

TEST(HardwareCosts, LinksAndMemoryInClosedForm) {
  const CostParameters fallback{1e-8, 2e-8, 3e-11, 4e-10, 5e-5};
  const auto h = two_links();
  const CostParameters one_node = hardware_costs(h, 8, fallback);
  EXPECT_DOUBLE_EQ(one_node.seconds_per_byte, 1.0 / 2e12);
  EXPECT_DOUBLE_EQ(one_node.seconds_per_comm_byte, 0.5 / 4e11);
  EXPECT_DOUBLE_EQ(one_node.seconds_per_collective, 2e-6);
  EXPECT_DOUBLE_EQ(one_node.seconds_per_key, 1e-8);  // none measured: the fallback's
  EXPECT_DOUBLE_EQ(one_node.seconds_per_row, 2e-8);
  const CostParameters two_nodes = hardware_costs(h, 16, fallback);
  EXPECT_DOUBLE_EQ(two_nodes.seconds_per_comm_byte, 0.5 * (7.0 / 15.0 / 4e11 + 8.0 / 15.0 / 5e10));
  EXPECT_DOUBLE_EQ(two_nodes.seconds_per_collective, 9e-6);
  auto measured = h;
  measured.seconds_per_key = 3e-10;
  measured.seconds_per_row = 4e-10;
  EXPECT_DOUBLE_EQ(hardware_costs(measured, 16, fallback).seconds_per_key, 3e-10);
  EXPECT_DOUBLE_EQ(hardware_costs(measured, 16, fallback).seconds_per_row, 4e-10);
  // A slow tier's byte: over the host link when the description has one, else the fallback's.
  EXPECT_DOUBLE_EQ(one_node.seconds_per_slow_byte, fallback.seconds_per_slow_byte);
  auto linked = h;
  linked.host_link = {6.4e10, 0.0, "test"};
  EXPECT_DOUBLE_EQ(hardware_costs(linked, 8, fallback).seconds_per_slow_byte, 1.0 / 6.4e10);
}

// A config with an "auto" layer of four tables and planner.hardware = `hardware_path`.
config::Config config_on(const std::string& hardware_path, const std::string& extra = "") {
  const std::string text = R"({
    "schema_version": 1,
    "solver": {"batchsize": 8192, "max_iter": 10, "seed": 5},
    "optimizer": {"type": "SGD", "sgd_hparam": {"learning_rate": 0.05}},
    "planner": {"hardware": ")" +
                           hardware_path + "\"" + extra + R"(},
    "layers": [
      {"name": "data", "type": "Data", "format": "Synthetic", "slot_size_array": [300000, 50000, 4000, 900],
       "synthetic": {"key_distribution": "zipf", "zipf_alpha": 1.1, "nnz_per_slot": [8, 2, 1, 4]},
       "label": {"top": "label", "label_dim": 1}, "dense": {"top": "dense", "dense_dim": 1},
       "sparse": [{"top": "data1", "slot_num": 4}]},
      {"name": "emb1", "type": "ShardedEmbedding", "sharding": "auto", "bottom": "data1", "top": "emb1",
       "sparse_embedding_hparam": {"max_vocabulary_size_per_gpu": 1000000, "embedding_vec_size": 64,
                                   "combiner": "sum"}}
    ]})";
  return config::parse_config_text(text, "hardware_costs_test");
}

TEST(HardwareCosts, ThePlannerTakesTheDevicesMemoryAndItsLinks) {
  const HardwareFile file("base", two_links());
  const std::string& path = file.path();
  auto config = config_on(path);
  const ShardingPlan plan = plan_sharding(config, 16);
  EXPECT_EQ(plan.memory_per_rank, std::int64_t{1} << 30);
  EXPECT_EQ(plan.hardware, "test (" + path + ")");
  EXPECT_TRUE(plan.default_compute_costs);
  EXPECT_DOUBLE_EQ(plan.cost.seconds_per_comm_byte, hardware_costs(two_links(), 16, plan.cost).seconds_per_comm_byte);
  // An explicit setting wins.
  const ShardingPlan set =
      plan_sharding(config_on(path, R"(, "seconds_per_comm_byte": 1e-9, "memory_per_rank": 5000000000)"), 16);
  EXPECT_DOUBLE_EQ(set.cost.seconds_per_comm_byte, 1e-9);
  EXPECT_EQ(set.memory_per_rank, 5000000000);
}

TEST(HardwareCosts, AFasterLinkNeverRaisesThePredictedStep) {
  for (const int ranks : {16, 64}) {
    double previous = 0.0;
    for (const double inter : {1e11, 5e10, 1e10, 1e9}) {  // ever slower across nodes
      const HardwareFile file("link", two_links(inter));
      const double step = plan_sharding(config_on(file.path()), ranks).step_seconds;
      EXPECT_GE(step, previous * (1 - 1e-12)) << inter << " B/s across nodes, " << ranks << " ranks";
      previous = step;
    }
  }
}

}  // namespace
}  // namespace embscale::plan
