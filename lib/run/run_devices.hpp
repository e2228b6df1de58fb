// RunDevices: what a GPU run of the engine needs on each rank, made once before its layers: the
// rank's GPU (GpuRank: library, device, stream, and with solver.communicator "nccl" NCCL over the
// run's ranks) and, with "mpi", a StagedCommunicator on the same stream. The engine's layers then
// run on that GPU and exchange over that communicator (EngineOptions). Empty for a host run.
#pragma once

#include <memory>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "embedding/engine.hpp"
#include "run/gpu_rank.hpp"

namespace embscale::run {

class RunDevices {
 public:
  // Collective over `world` when `config` runs on the GPU (config::runs_on_gpu), nothing
  // otherwise. Each refusal is an InputError on every rank (GpuRank::open's), so a caller inside
  // comm::run_agreed exits 2 with one message. `world` must be an MPI communicator.
  static std::unique_ptr<RunDevices> open(comm::Communicator& world, const HostPlacement& placement,
                                          const config::Config& config);

  const GpuRank& gpu() const noexcept { return *gpu_; }
  // The communicator the engine's device layers exchange over (NCCL's, or the staged one).
  comm::Communicator& step_communicator() const noexcept;
  embedding::EngineOptions engine_options() const;

 private:
  explicit RunDevices(std::unique_ptr<GpuRank> gpu) : gpu_(std::move(gpu)) {}

  std::unique_ptr<GpuRank> gpu_;
  std::unique_ptr<comm::Communicator> staged_;  // solver.communicator "mpi"
};

}  // namespace embscale::run
