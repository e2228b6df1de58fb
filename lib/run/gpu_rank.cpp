#include "run/gpu_rank.hpp"

#include "comm/failure.hpp"
#include "core/error.hpp"

namespace embscale::run {

GpuRank::GpuRank(device::DeviceLibrary library, int device)
    : library_(std::move(library)), device_(device), stream_(library_) {}

std::unique_ptr<GpuRank> GpuRank::open(comm::Communicator& world, const HostPlacement& placement, int device, bool nccl,
                                       const std::string& field) {
  return open_with(
      world, placement, [device](int) { return device; }, nccl, field);
}

std::unique_ptr<GpuRank> GpuRank::open(comm::Communicator& world, const HostPlacement& placement,
                                       const config::Config& config) {
  return open_with(
      world, placement, [&](int gpus) { return gpu_of_rank(config, placement, world.size(), gpus); },
      config.solver.communicator == config::DeviceExchange::kNccl, device_field(config) + ": \"gpu\"");
}

std::unique_ptr<GpuRank> GpuRank::open_with(comm::Communicator& world, const HostPlacement& placement,
                                            const std::function<int(int)>& device_of, bool nccl,
                                            const std::string& field) {
  std::unique_ptr<GpuRank> rank;
  // Local checks first, agreed: no rank goes on to NCCL's collective set-up alone.
  comm::all_or_none(world, [&] {
    auto library = load_gpu_library(field, placement.host);
    std::string why_none;
    const int gpus = library.device_count(&why_none);
    const int here = placement.ranks_here(world.size());
    const bool bound = gpus_bound_per_rank(gpus, here);
    int device = device_of(gpus);
    if (bound) device %= gpus;
    if (nccl && here > gpus && !bound)
      throw InputError(field + ": " + std::to_string(here) + " ranks run on " + placement.host + ", which has " +
                       std::to_string(gpus) + (gpus == 1 ? " GPU" : " GPUs") + "; NCCL takes one rank per GPU");
    if (device < 0 || device >= gpus)
      throw InputError(field + ": GPU " + std::to_string(device) + " is beyond " + placement.host + "'s " +
                       std::to_string(gpus));
    library.check(library.functions().set_device(device), "set_device");
    rank.reset(new GpuRank(std::move(library), device));
  });
  if (!nccl) return rank;
  try {
    rank->nccl_ = comm::NcclCommunicator::bootstrap(world, rank->library_, rank->stream());
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {  // the same message on every rank (the bootstrap agrees)
    throw InputError(field + ": " + e.what());
  }
  return rank;
}

}  // namespace embscale::run
