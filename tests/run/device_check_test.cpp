// The device check (lib/run/device_check.hpp) against the stand-in device library
// (tests/device/fake_device_library.c, whose device count $EMBSCALE_FAKE_DEVICE_COUNT sets): what a
// GPU run is refused for before it starts, with which message, and which GPU each rank takes.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "../device/scoped_env.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "device/library_search.hpp"
#include "run/device_check.hpp"

namespace embscale::run {
namespace {

using testing::ScopedEnv;

config::Config gpu_config(const std::function<void(nlohmann::json&)>& edit = {}) {
  auto j = nlohmann::json::parse(config::default_config_text());
  j["solver"]["device"] = "gpu";
  if (edit) edit(j);
  return config::parse_config(j, "t");
}

// One host holding world ranks [0, ranks_on_host), this process being `rank`.
HostPlacement one_host(int ranks_on_host, int rank = 0) {
  HostPlacement p;
  p.host = "node-a";
  p.rank = rank;
  for (int r = 0; r < ranks_on_host; ++r) p.host_ranks.push_back(r);
  return p;
}

std::string refusal(const config::Config& config, const HostPlacement& placement, int ranks) {
  try {
    check_devices(config, placement, ranks);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(DeviceCheck, AHostRunLoadsNothing) {
  const ScopedEnv library(device::kLibraryVariable, "/nonexistent/libembscale_cuda.so");
  const auto host = config::parse_config(nlohmann::json::parse(config::default_config_text()), "t");
  EXPECT_EQ(refusal(host, one_host(4), 4), "");
  EXPECT_NO_THROW(check_device_support(host));
}

TEST(DeviceCheck, NoLibraryIsRefusedWithTheLoadersReasons) {
  const ScopedEnv library(device::kLibraryVariable, "/nonexistent/libembscale_cuda.so");
  const auto message = refusal(gpu_config(), one_host(1), 1);
  EXPECT_TRUE(
      message.starts_with("layers[emb1].device: \"gpu\" needs embscale's GPU library, which node-a cannot "
                          "load: "))
      << message;
  EXPECT_NE(message.find("/nonexistent/libembscale_cuda.so"), std::string::npos) << message;
}

TEST(DeviceCheck, NoGpuIsRefusedWithTheRuntimesReason) {
  const ScopedEnv library(device::kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  const ScopedEnv count("EMBSCALE_FAKE_DEVICE_COUNT", "0");
  EXPECT_EQ(refusal(gpu_config(), one_host(1), 1),
            std::string("layers[emb1].device: \"gpu\" needs a GPU; node-a has none (") + EMBSCALE_TEST_FAKE_DEVICE +
                ": no CUDA device: cudaGetDeviceCount: no CUDA-capable device is detected)");
}

TEST(DeviceCheck, NcclTakesOneRankPerGpu) {
  const ScopedEnv library(device::kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  const ScopedEnv count("EMBSCALE_FAKE_DEVICE_COUNT", "2");
  EXPECT_EQ(refusal(gpu_config(), one_host(2), 2), "");
  EXPECT_EQ(refusal(gpu_config(), one_host(4), 4),
            "solver.communicator: 4 ranks run on node-a, which has 2 GPUs; NCCL takes one rank per GPU: run at most 2 "
            "per host, or set solver.communicator to \"mpi\" (the ranks then share the GPUs, exchanging through host "
            "memory)");
  // A sweep point on the first two ranks of the four fits; rank 3 is not in it.
  EXPECT_EQ(refusal(gpu_config(), one_host(4), 2), "");
  EXPECT_EQ(refusal(gpu_config(), one_host(4, 3), 2), "");
  const auto staged = gpu_config([](auto& j) { j["solver"]["communicator"] = "mpi"; });
  EXPECT_EQ(refusal(staged, one_host(4), 4), "") << "staged ranks share the GPUs";
}

TEST(DeviceCheck, SolverGpuListsAreCheckedAgainstTheHost) {
  const ScopedEnv library(device::kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  const ScopedEnv count("EMBSCALE_FAKE_DEVICE_COUNT", "2");
  const auto beyond = gpu_config([](auto& j) { j["solver"]["gpu"] = {0, 3}; });
  EXPECT_EQ(refusal(beyond, one_host(1), 1), "solver.gpu: GPU 3 (node 0's entry 1) is beyond node-a's 2 GPUs (0 to 1)");
  const auto short_list = gpu_config([](auto& j) { j["solver"]["gpu"] = {1}; });
  EXPECT_EQ(refusal(short_list, one_host(2), 2),
            "solver.gpu: 2 ranks run on node-a and its list names 1 GPU; NCCL takes one rank per GPU: name a GPU "
            "per rank, or set solver.communicator to \"mpi\"");
  const auto twice = gpu_config([](auto& j) { j["solver"]["gpu"] = {1, 1}; });
  EXPECT_EQ(refusal(twice, one_host(2), 2),
            "solver.gpu: node 0's list gives one GPU to two of its ranks; NCCL takes one rank per GPU: list each "
            "once, or set solver.communicator to \"mpi\"");
  const auto per_node = gpu_config([](auto& j) { j["solver"]["gpu"] = nlohmann::json::parse("[[0], [1]]"); });
  auto third_node = one_host(1);
  third_node.node = 2;
  EXPECT_EQ(refusal(per_node, third_node, 1),
            "solver.gpu: one list per node, 2 lists, but this job has node 2 (hosts in the order of their first "
            "rank)");
}

TEST(DeviceCheck, EachRankTakesItsGpu) {
  auto second_node = one_host(0);
  second_node.node = 1;
  second_node.host_ranks = {4, 5, 6};
  second_node.rank = 6;
  EXPECT_EQ(gpu_of_rank(gpu_config(), second_node, 7, 8), 2) << "NCCL: the local rank";
  EXPECT_EQ(gpu_of_rank(gpu_config(), second_node, 6, 8), -1) << "not in a run on the first 6 ranks";
  const auto staged = gpu_config([](auto& j) { j["solver"]["communicator"] = "mpi"; });
  EXPECT_EQ(gpu_of_rank(staged, second_node, 7, 2), 0) << "staged: local rank modulo the host's GPUs";
  const auto lists = gpu_config([](auto& j) { j["solver"]["gpu"] = nlohmann::json::parse("[[0, 1, 2], [5, 6, 7]]"); });
  EXPECT_EQ(gpu_of_rank(lists, second_node, 7, 8), 7) << "its node's list at its local rank";
}

TEST(DeviceCheck, PartsWithoutAGpuPathAreRefusedByName) {
  const auto eviction = gpu_config([](auto& j) {
    j["layers"][1]["storage"] = {{"type", "dynamic"}, {"max_capacity", 1024}};
    j["eviction"] = nlohmann::json::object();
  });
  try {
    check_device_support(eviction);
    ADD_FAILURE() << "the eviction study has no GPU path";
  } catch (const InputError& e) {
    EXPECT_TRUE(std::string(e.what()).starts_with("eviction: the eviction study follows the host tables' accesses"))
        << e.what();
  }
}

}  // namespace
}  // namespace embscale::run
