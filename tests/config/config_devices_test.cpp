// Where the embedding layers run (lib/config/layer_devices.cpp and the solver's device keys):
// "device" on a layer or solver-wide, one device per run, solver.communicator only on a GPU run,
// HugeCTR's solver.gpu lists, and what a host run records of them.
#include <gtest/gtest.h>

#include "config_test_support.hpp"

namespace embscale::config {
namespace {

using testing::default_json;
using testing::error_of;
using testing::layer;

// The default config with a second embedding layer (emb2) over the same slots.
nlohmann::json two_layers() {
  auto j = default_json();
  auto second = layer(j, "emb1");
  second["name"] = "emb2";
  second["top"] = "emb2";
  j["layers"].push_back(second);
  return j;
}

TEST(ConfigDevices, LayersRunOnTheHostUnlessAsked) {
  const auto c = parse_config(default_json(), "t");
  EXPECT_EQ(c.solver.device, Device::kHost);
  EXPECT_EQ(c.embeddings[0].device, Device::kHost);
  EXPECT_FALSE(runs_on_gpu(c));
}

TEST(ConfigDevices, ALayerOrTheSolverAsksForTheGpu) {
  auto on_layer = two_layers();
  layer(on_layer, "emb1")["device"] = "gpu";
  layer(on_layer, "emb2")["device"] = "gpu";
  const auto a = parse_config(on_layer, "t");
  EXPECT_EQ(a.embeddings[0].device, Device::kGpu);
  EXPECT_EQ(a.embeddings[1].device, Device::kGpu);
  EXPECT_TRUE(runs_on_gpu(a));
  EXPECT_EQ(a.solver.communicator, DeviceExchange::kNccl) << "NCCL unless the config says otherwise";

  auto solver_wide = two_layers();
  solver_wide["solver"]["device"] = "gpu";
  solver_wide["solver"]["communicator"] = "mpi";
  const auto b = parse_config(solver_wide, "t");
  EXPECT_EQ(b.embeddings[0].device, Device::kGpu);
  EXPECT_EQ(b.embeddings[1].device, Device::kGpu);
  EXPECT_EQ(b.solver.communicator, DeviceExchange::kStagedMpi);

  // A layer's own key wins over the solver's.
  auto overridden = default_json();
  overridden["solver"]["device"] = "gpu";
  layer(overridden, "emb1")["device"] = "host";
  EXPECT_FALSE(runs_on_gpu(parse_config(overridden, "t")));
}

TEST(ConfigDevices, OneRunsLayersShareOneDevice) {
  auto j = two_layers();
  layer(j, "emb2")["device"] = "gpu";
  EXPECT_EQ(error_of(j),
            "test.json: layers[emb2].device: \"gpu\", but layers[emb1] runs on \"host\": the embedding layers of one "
            "run run on one device (set solver.device for all of them)");
  j["solver"]["device"] = "gpu";
  layer(j, "emb1")["device"] = "host";
  layer(j, "emb2").erase("device");
  EXPECT_EQ(error_of(j),
            "test.json: layers[emb2].device: \"gpu\", but layers[emb1] runs on \"host\": the embedding layers of one "
            "run run on one device (set solver.device for all of them)");
}

TEST(ConfigDevices, BadValuesAreNamed) {
  auto layer_value = default_json();
  layer(layer_value, "emb1")["device"] = "cuda";
  EXPECT_EQ(error_of(layer_value), "test.json: layers[emb1].device: expected \"host\" or \"gpu\", got \"cuda\"");
  auto solver_value = default_json();
  solver_value["solver"]["communicator"] = "gloo";
  solver_value["solver"]["device"] = "gpu";
  EXPECT_EQ(error_of(solver_value), "test.json: solver.communicator: expected \"nccl\" or \"mpi\", got \"gloo\"");
}

TEST(ConfigDevices, TheCommunicatorIsAGpuRunsChoice) {
  auto j = default_json();
  j["solver"]["communicator"] = "nccl";
  EXPECT_EQ(error_of(j),
            "test.json: solver.communicator: chooses how the ranks of a GPU run exchange (NCCL, or MPI staged "
            "through host memory); this config's layers run on the host, over MPI (set solver.device to \"gpu\", "
            "or remove the key)");
}

TEST(ConfigDevices, HugeCtrGpuListsParse) {
  auto one_node = default_json();
  one_node["solver"]["gpu"] = {0, 2, 4, 7};
  one_node["solver"]["device"] = "gpu";
  const auto a = parse_config(one_node, "t");
  EXPECT_EQ(a.solver.gpus, (std::vector<std::vector<std::int32_t>>{{0, 2, 4, 7}}));
  EXPECT_TRUE(a.not_used.empty()) << "a GPU run uses solver.gpu";

  auto per_node = one_node;
  per_node["solver"]["gpu"] = nlohmann::json::parse("[[0, 1], [1, 2]]");
  EXPECT_EQ(parse_config(per_node, "t").solver.gpus, (std::vector<std::vector<std::int32_t>>{{0, 1}, {1, 2}}));

  auto mixed = one_node;
  mixed["solver"]["gpu"] = nlohmann::json::parse("[0, [1, 2]]");
  EXPECT_EQ(error_of(mixed),
            "test.json: solver.gpu[1]: expected a list of GPU indices, or one list per node, not both, got [1,2]");
  auto empty_node = one_node;
  empty_node["solver"]["gpu"] = nlohmann::json::parse("[[0], []]");
  EXPECT_EQ(error_of(empty_node), "test.json: solver.gpu[1]: expected a non-empty list of GPU indices, got []");

  // On a host run the list changes nothing, and says so.
  auto host_run = default_json();
  host_run["solver"]["gpu"] = {0, 1};
  EXPECT_EQ(parse_config(host_run, "t").not_used,
            (std::vector<std::string>{
                "solver.gpu (the GPUs a node uses: this config's layers run on the host, on the launcher's ranks)"}));
}

}  // namespace
}  // namespace embscale::config
