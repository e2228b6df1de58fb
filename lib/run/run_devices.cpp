#include "run/run_devices.hpp"

#include <mpi.h>

#include "comm/staged_communicator.hpp"
#include "core/error.hpp"

namespace embscale::run {

std::unique_ptr<RunDevices> RunDevices::open(comm::Communicator& world, const HostPlacement& placement,
                                             const config::Config& config) {
  if (!config::runs_on_gpu(config)) return nullptr;
  std::unique_ptr<RunDevices> devices(new RunDevices(GpuRank::open(world, placement, config)));
  if (config.solver.communicator == config::DeviceExchange::kStagedMpi) {
    const comm::NativeHandle handle = world.native_handle();
    EMBSCALE_EXPECTS(handle.kind == "mpi", "a GPU run's world is an MPI communicator");
    devices->staged_ = std::make_unique<comm::StagedCommunicator>(*static_cast<const MPI_Comm*>(handle.handle),
                                                                  devices->gpu_->library(), devices->gpu_->stream());
  }
  return devices;
}

comm::Communicator& RunDevices::step_communicator() const noexcept {
  if (staged_) return *staged_;
  return *gpu_->nccl();
}

embedding::EngineOptions RunDevices::engine_options() const {
  embedding::EngineOptions options;
  options.device_library = &gpu_->library();
  options.device_context = ExecutionContext::for_device(gpu_->device(), gpu_->stream());
  return options;
}

}  // namespace embscale::run
