// One rank's GPU in a GPU run: the device library, the GPU the rank took, the stream its work is
// queued on, and with NCCL its communicator over the run's ranks. Made once per rank, before the
// work: `embscale collectives --backend nccl` today, the engine's GPU step with its layers.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "comm/communicator.hpp"
#include "comm/nccl_communicator.hpp"
#include "config/config.hpp"
#include "device/device_library.hpp"
#include "device/device_resources.hpp"
#include "run/device_check.hpp"

namespace embscale::run {

class GpuRank {
 public:
  // Collective over `world`: each rank loads the library, takes GPU `device` (checked against the
  // host's count; one rank per GPU when `nccl`, as NCCL requires; modulo what it sees when the
  // launcher bound GPUs per rank, device_check.hpp's gpus_bound_per_rank), makes its stream, and with
  // `nccl` joins an NcclCommunicator over `world`. Every refusal (no library, no GPU, too many ranks
  // per GPU, NCCL missing on some rank) is an InputError on every rank naming `field` (what asked
  // for the GPU) and the rank's host, so a caller inside comm::run_agreed exits 2 with one message.
  static std::unique_ptr<GpuRank> open(comm::Communicator& world, const HostPlacement& placement, int device, bool nccl,
                                       const std::string& field);
  // The same for a GPU run of `config` on all of `world`'s ranks: the GPU of device_check.hpp's
  // gpu_of_rank (solver.gpu, or the local rank), NCCL as solver.communicator says.
  static std::unique_ptr<GpuRank> open(comm::Communicator& world, const HostPlacement& placement,
                                       const config::Config& config);

  const device::DeviceLibrary& library() const noexcept { return library_; }
  int device() const noexcept { return device_; }
  void* stream() const noexcept { return stream_.handle(); }
  // Null without NCCL.
  comm::NcclCommunicator* nccl() const noexcept { return nccl_.get(); }

 private:
  GpuRank(device::DeviceLibrary library, int device);
  // open's body: the GPU is device_of(the GPUs this rank sees).
  static std::unique_ptr<GpuRank> open_with(comm::Communicator& world, const HostPlacement& placement,
                                            const std::function<int(int)>& device_of, bool nccl,
                                            const std::string& field);

  device::DeviceLibrary library_;
  int device_;
  device::Stream stream_;
  std::unique_ptr<comm::NcclCommunicator> nccl_;
};

}  // namespace embscale::run
