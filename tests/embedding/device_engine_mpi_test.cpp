// The engine's device step (device_pooled_exchange.hpp, the device row stores and the
// stand-in regression on the device) against the host engine, on the stand-in device library (its
// embedding_step, embedding_rows and kv_table families run the kernels' definitions in loops over host
// memory, strict: a host buffer handed where a GPU reads device memory fails the call), over both
// device communicators (NCCL's stand-in between ranks over shared memory, and MPI staging
// through host memory), on the 1, 2 and 4 ranks this binary is launched on. The device step
// follows the host's summation orders, so with the host's collectives (staged MPI) every step's
// loss and pooled output, and every row after the run, are the host engine's bits, not merely
// close; over NCCL, whose reductions take their own order, they are close. The host engine itself is checked
// against the single-process reference by engine_mpi_test.cpp.
#include <gtest/gtest.h>
#include <mpi.h>

#include <bit>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "../device/scoped_env.hpp"
#include "comm/mpi_communicator.hpp"
#include "comm/nccl_communicator.hpp"
#include "comm/staged_communicator.hpp"
#include "core/error.hpp"
#include "device/device_resources.hpp"
#include "embedding/engine.hpp"
#include "embedding/engine_test_support.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::embedding {
namespace {

constexpr std::int64_t kSteps = 4;

struct Run {
  std::vector<std::uint64_t> losses;               // each step's, as bits
  std::vector<std::vector<std::uint32_t>> pooled;  // each step's, as bits
  std::map<Key, std::vector<std::uint32_t>> rows;  // after the run
  std::vector<std::string> phases;                 // of the last step
};

std::vector<std::uint32_t> bits(std::span<const float> values) {
  std::vector<std::uint32_t> out;
  for (const float v : values) out.push_back(std::bit_cast<std::uint32_t>(v));
  return out;
}

config::Config device_config(const std::string& scheme, config::Combiner combiner, const config::Optimizer& optimizer) {
  config::SlotWorkload slot;
  slot.keys.distribution = config::KeyDistribution::kZipf;
  slot.nnz = 3;
  config::Config cfg = testing::synthetic_config({40, 9, 300}, slot, 24, kSteps, 1234);
  config::EmbeddingLayer layer = testing::scheme_layer(scheme);
  if (scheme == "table_row_wise") {  // two nodes of two ranks on 4 ranks (as engine_mpi_test)
    int ranks = 1;
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    layer.ranks_per_node = ranks >= 4 ? 2 : 1;
  }
  layer.combiner = combiner;
  layer.optimizer = optimizer;
  cfg.embeddings.push_back(layer);
  return cfg;
}

Run run(comm::Communicator& comm, const config::Config& cfg, EngineOptions options) {
  const workloads::SyntheticGenerator gen(cfg.data, cfg.solver.seed, cfg.solver.batchsize);
  EmbeddingEngine engine(comm, cfg, cfg.data.slot_size_array, options);
  StepRecorder recorder(engine.make_phase_clock());
  Run out;
  for (std::int64_t it = 0; it < kSteps; ++it) {
    const double loss = engine.step(gen.generate(it, comm.rank(), comm.size()), recorder);
    out.losses.push_back(std::bit_cast<std::uint64_t>(loss));
    out.pooled.push_back(bits(engine.pooled_on_host(0)));
  }
  engine.store(0).for_each_row([&](Key key, std::span<const float> values) { out.rows[key] = bits(values); });
  for (const auto& phase : recorder.phases()) out.phases.push_back(phase.name);
  return out;
}

enum class DeviceComm { kNccl, kStaged };

// The host engine, then the same config on the device over `which`, on every rank of the world.
void check_device_matches_host(const config::Config& host_cfg, DeviceComm which, const std::string& what) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const Run host = run(world, host_cfg, {});

  const embscale::testing::ScopedEnv strict("EMBSCALE_FAKE_STRICT_DEVICE_MEMORY", "1");
  const auto library = device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  device::Stream stream(library);
  std::unique_ptr<comm::Communicator> device_comm;
  if (which == DeviceComm::kNccl) device_comm = comm::NcclCommunicator::bootstrap(world, library, stream.handle());
  else device_comm = std::make_unique<comm::StagedCommunicator>(MPI_COMM_WORLD, library, stream.handle());
  config::Config cfg = host_cfg;
  cfg.embeddings[0].device = config::Device::kGpu;
  EngineOptions options;
  options.device_library = &library;
  options.device_context = ExecutionContext::for_device(0, stream.handle());
  const Run device = run(*device_comm, cfg, options);

  const std::string where = what + " on rank " + std::to_string(world.rank()) + " of " + std::to_string(world.size());
  EXPECT_EQ(device.phases, host.phases) << where;
  ASSERT_EQ(device.losses.size(), host.losses.size());
  ASSERT_EQ(device.rows.size(), host.rows.size()) << where;
  // Staged MPI makes the host engine's own MPI calls: the same bits. NCCL reduces in its own
  // order (the stand-in in rank order, MPI by its algorithm), so from 3 ranks on a reduce-scatter's
  // sums may differ in the last bit: close, as engine_mpi_test's reference.
  const bool exact = which == DeviceComm::kStaged || world.size() <= 2;
  testing::RelativeError pooled, rows;
  for (std::size_t s = 0; s < host.losses.size(); ++s) {
    if (exact) {
      EXPECT_EQ(device.losses[s], host.losses[s]) << where << ": the loss of step " << s;
      EXPECT_EQ(device.pooled[s], host.pooled[s]) << where << ": the pooled output of step " << s;
    }
    ASSERT_EQ(device.pooled[s].size(), host.pooled[s].size());
    for (std::size_t v = 0; v < host.pooled[s].size(); ++v)
      pooled.add(std::bit_cast<float>(device.pooled[s][v]), std::bit_cast<float>(host.pooled[s][v]));
  }
  if (exact) {
    EXPECT_TRUE(device.rows == host.rows) << where << ": the rows after " << kSteps << " steps";
  }
  for (const auto& [key, values] : host.rows) {
    const auto it = device.rows.find(key);
    ASSERT_NE(it, device.rows.end()) << where << ": key " << key << " is not held on the device";
    for (std::size_t d = 0; d < values.size(); ++d)
      rows.add(std::bit_cast<float>(it->second[d]), std::bit_cast<float>(values[d]));
  }
  EXPECT_LT(pooled.relative(), testing::kTolerance) << where << ": the pooled outputs";
  EXPECT_LT(rows.relative(), testing::kTolerance) << where << ": the rows";
}

config::Optimizer optimizer(config::OptimizerType type, config::UpdateType update) {
  config::Optimizer o;
  o.type = type;
  o.update_type = update;
  o.learning_rate = type == config::OptimizerType::kAdam ? 0.01 : 0.3;
  o.momentum_factor = 0.9;
  o.initial_accu_value = 0.1;
  o.epsilon = 1e-6;
  return o;
}

class DeviceSchemes : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceSchemes, EveryOptimizerAndCombinerGivesTheHostsBitsOverStagedMpi) {
  using config::OptimizerType;
  using config::UpdateType;
  for (const auto combiner : {config::Combiner::kSum, config::Combiner::kMean})
    for (const auto type : {OptimizerType::kSGD, OptimizerType::kMomentumSGD, OptimizerType::kNesterov,
                            OptimizerType::kAdam, OptimizerType::kAdaGrad, OptimizerType::kRowWiseAdaGrad})
      for (const auto update : {UpdateType::kLocal, UpdateType::kGlobal}) {
        const std::string what = GetParam() + (combiner == config::Combiner::kMean ? ", mean, " : ", sum, ") +
                                 "optimizer " + std::to_string(static_cast<int>(type)) + " update " +
                                 std::to_string(static_cast<int>(update));
        check_device_matches_host(device_config(GetParam(), combiner, optimizer(type, update)), DeviceComm::kStaged,
                                  what);
      }
}

TEST_P(DeviceSchemes, NcclGivesTheHostsResults) {
  for (const auto type : {config::OptimizerType::kSGD, config::OptimizerType::kAdam})
    check_device_matches_host(
        device_config(GetParam(), config::Combiner::kMean, optimizer(type, config::UpdateType::kGlobal)),
        DeviceComm::kNccl, GetParam() + ", NCCL, optimizer " + std::to_string(static_cast<int>(type)));
}

TEST_P(DeviceSchemes, LazyGlobalAdamGivesTheHostsBits) {
  // On the stand-in the catch-up's pow is the host's (a GPU's may differ by one ulp:
  // portable/optimizer_ref.hpp).
  check_device_matches_host(device_config(GetParam(), config::Combiner::kMean,
                                          optimizer(config::OptimizerType::kAdam, config::UpdateType::kLazyGlobal)),
                            DeviceComm::kStaged, GetParam() + ", LazyGlobal Adam, staged");
}

TEST_P(DeviceSchemes, SixteenBitRowsGiveTheHostsBits) {
  for (const auto type : {kv::ValueType::kFloat16, kv::ValueType::kBFloat16}) {
    config::Config cfg = device_config(GetParam(), config::Combiner::kMean,
                                       optimizer(config::OptimizerType::kAdaGrad, config::UpdateType::kGlobal));
    cfg.embeddings[0].storage.table.value_type = type;
    check_device_matches_host(cfg, DeviceComm::kStaged,
                              GetParam() + (type == kv::ValueType::kFloat16 ? ", fp16" : ", bf16"));
  }
}

TEST_P(DeviceSchemes, EvaluationModeGivesTheHostsPooledOutputs) {
  config::Config cfg = device_config(GetParam(), config::Combiner::kSum, {});
  cfg.embeddings[0].storage.table.training = false;
  check_device_matches_host(cfg, DeviceComm::kStaged, GetParam() + ", evaluation");
}

// The GPU's dynamic table (device_kv_row_store.hpp) against the host's (kv_row_store.hpp), with
// room for every key, in training and evaluation: the host's bits.
TEST_P(DeviceSchemes, DynamicStorageGivesTheHostsBits) {
  if (testing::static_only(GetParam())) GTEST_SKIP() << "static storage only";
  using config::OptimizerType;
  using config::UpdateType;
  struct Optimizer {
    OptimizerType type;
    UpdateType update;
  };
  // Global momentum, Nesterov and Adam move untouched rows: the table's sweep.
  const Optimizer optimizers[] = {
      {OptimizerType::kSGD, UpdateType::kGlobal},           {OptimizerType::kAdaGrad, UpdateType::kGlobal},
      {OptimizerType::kRowWiseAdaGrad, UpdateType::kLocal}, {OptimizerType::kMomentumSGD, UpdateType::kLocal},
      {OptimizerType::kNesterov, UpdateType::kGlobal},      {OptimizerType::kAdam, UpdateType::kGlobal},
      {OptimizerType::kAdam, UpdateType::kLazyGlobal}};
  for (const auto& o : optimizers) {
    config::Config cfg = device_config(GetParam(), config::Combiner::kMean, optimizer(o.type, o.update));
    cfg.embeddings[0].storage.dynamic = true;
    cfg.embeddings[0].storage.table.max_capacity = 4096;
    check_device_matches_host(cfg, DeviceComm::kStaged,
                              GetParam() + ", dynamic, optimizer " + std::to_string(static_cast<int>(o.type)));
  }
  config::Config eval = device_config(GetParam(), config::Combiner::kSum, {});
  eval.embeddings[0].storage.dynamic = true;
  eval.embeddings[0].storage.table.max_capacity = 4096;
  eval.embeddings[0].storage.table.training = false;
  check_device_matches_host(eval, DeviceComm::kStaged, GetParam() + ", dynamic, evaluation");
}

// A capacity far below the keys a rank touches: the GPU's table evicts and stays within it. Not
// the host's bits: a call's keys come in ascending order on the GPU (its de-duplication sorts)
// and in order of first occurrence on the host, and which newcomers a full bucket keeps depends on
// their order (device_kv_row_store_test holds the store to the host's for one order).
TEST_P(DeviceSchemes, DynamicStorageEvictsWithinItsCapacity) {
  if (testing::static_only(GetParam())) GTEST_SKIP() << "static storage only";
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const embscale::testing::ScopedEnv strict("EMBSCALE_FAKE_STRICT_DEVICE_MEMORY", "1");
  const auto library = device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  device::Stream stream(library);
  comm::StagedCommunicator staged(MPI_COMM_WORLD, library, stream.handle());
  config::Config cfg = device_config(GetParam(), config::Combiner::kMean,
                                     optimizer(config::OptimizerType::kAdaGrad, config::UpdateType::kLocal));
  auto& layer = cfg.embeddings[0];
  layer.device = config::Device::kGpu;
  layer.storage.dynamic = true;
  layer.storage.table.max_capacity = 32;
  layer.storage.table.bucket_capacity = 16;
  EngineOptions options;
  options.device_library = &library;
  options.device_context = ExecutionContext::for_device(0, stream.handle());
  const embedding::Run device = run(staged, cfg, options);
  config::Config roomy = cfg;
  roomy.embeddings[0].storage.table.max_capacity = 4096;
  const embedding::Run all = run(staged, roomy, options);
  const std::string where = GetParam() + " on rank " + std::to_string(world.rank());
  const long touched = static_cast<long>(all.rows.size());
  long most = 0;
  MPI_Allreduce(&touched, &most, 1, MPI_LONG, MPI_MAX, MPI_COMM_WORLD);
  EXPECT_GT(most, 32) << GetParam() << ": some rank touches more keys than its small table holds";
  EXPECT_LE(device.rows.size(), std::min<std::size_t>(32, all.rows.size())) << where;
  for (const auto loss : device.losses) EXPECT_TRUE(std::isfinite(std::bit_cast<double>(loss))) << where;
}

std::vector<std::string> device_schemes() {
  std::vector<std::string> names;
  for (const auto& entry : schemes())
    if (entry.runs_on_device) names.emplace_back(entry.name);
  return names;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& param) { return param.param; }

INSTANTIATE_TEST_SUITE_P(Registry, DeviceSchemes, ::testing::ValuesIn(device_schemes()), param_name);

TEST(DeviceLayers, WhatTheGpuStepLacksIsRefusedByName) {
  config::Config dynamic = device_config("distributed_slot", config::Combiner::kSum,
                                         optimizer(config::OptimizerType::kAdaGrad, config::UpdateType::kGlobal));
  dynamic.embeddings[0].device = config::Device::kGpu;
  dynamic.embeddings[0].storage.dynamic = true;
  dynamic.embeddings[0].storage.table.max_capacity = 4096;
  EXPECT_NO_THROW(check_layers(dynamic, dynamic.data.slot_size_array));
  config::Config sixteen_bits = dynamic;
  sixteen_bits.embeddings[0].storage.table.value_type = kv::ValueType::kBFloat16;
  try {
    check_layers(sixteen_bits, sixteen_bits.data.slot_size_array);
    FAIL() << "bf16 rows in the GPU's dynamic table were accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[emb1].storage.embedding_dtype"), std::string::npos) << e.what();
  }
  config::Config every_occurrence = device_config("all2all_dense", config::Combiner::kSum, {});
  every_occurrence.embeddings[0].device = config::Device::kGpu;
  every_occurrence.embeddings[0].deduplicate = false;
  try {
    check_layers(every_occurrence, every_occurrence.data.slot_size_array);
    FAIL() << "deduplicate false on the GPU was accepted";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layers[emb1].deduplicate"), std::string::npos) << e.what();
  }
}

// A GPU whose memory runs out on one rank only (ranks sharing a GPU, the large tables on a few):
// every rank throws where the tables are made, none waits in a later collective.
TEST(DeviceLayers, ATableTheGpuCannotHoldOnOneRankFailsEveryRank) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  const auto library = device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  device::Stream stream(library);
  comm::StagedCommunicator staged(MPI_COMM_WORLD, library, stream.handle());
  config::Config cfg = device_config("distributed_slot", config::Combiner::kSum,
                                     optimizer(config::OptimizerType::kSGD, config::UpdateType::kLocal));
  cfg.embeddings[0].device = config::Device::kGpu;
  EngineOptions options;
  options.device_library = &library;
  options.device_context = ExecutionContext::for_device(0, stream.handle());
  std::optional<embscale::testing::ScopedEnv> full;
  if (world.rank() == 0) full.emplace("EMBSCALE_FAKE_DEVICE_MEMORY_LIMIT", "1000");  // rank 0's table is larger
  try {
    EmbeddingEngine engine(staged, cfg, cfg.data.slot_size_array, options);
    FAIL() << "the engine was built on rank " << world.rank();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("out of memory"), std::string::npos) << e.what();
  }
}

TEST(DeviceLayers, AnEngineWithoutAGpuRefusesADeviceLayer) {
  comm::MpiCommunicator world(MPI_COMM_WORLD);
  config::Config cfg = device_config("distributed_slot", config::Combiner::kSum, {});
  cfg.embeddings[0].device = config::Device::kGpu;
  EXPECT_THROW(EmbeddingEngine(world, cfg, cfg.data.slot_size_array, {}), Error);
}

}  // namespace
}  // namespace embscale::embedding
