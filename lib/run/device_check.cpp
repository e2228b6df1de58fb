#include "run/device_check.hpp"

#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <optional>
#include <set>

#include "core/error.hpp"
#include "device/device_library.hpp"

namespace embscale::run {
namespace {

std::string this_host() {
  std::array<char, 256> name{};
  if (gethostname(name.data(), name.size() - 1) != 0) return "this host";
  return name.data();
}

// solver.gpu's list for `node`: its own, or the one list every node shares; null when none given.
const std::vector<std::int32_t>* gpu_list(const config::Config& config, int node) {
  const auto& lists = config.solver.gpus;
  if (lists.empty()) return nullptr;
  if (lists.size() == 1) return &lists.front();
  if (static_cast<std::size_t>(node) >= lists.size())
    throw InputError("solver.gpu: one list per node, " + std::to_string(lists.size()) +
                     " lists, but this job has node " + std::to_string(node) +
                     " (hosts in the order of their first rank)");
  return &lists[static_cast<std::size_t>(node)];
}

std::string plural(int n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string device_field(const config::Config& config) {
  for (const auto& layer : config.embeddings)
    if (layer.device == config::Device::kGpu) return "layers[" + layer.name + "].device";
  return "solver.device";
}

bool gpus_bound_per_rank(int visible_gpus, int ranks_here) {
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  return visible != nullptr && visible[0] != '\0' && visible_gpus < ranks_here;
}

device::DeviceLibrary load_gpu_library(const std::string& field, const std::string& host) {
  std::optional<device::DeviceLibrary> library;
  try {
    library = device::DeviceLibrary::load();
  } catch (const Error& e) {
    throw InputError(field + " needs embscale's GPU library, which " + host + " cannot load: " + e.what());
  }
  std::string why_none;
  if (library->device_count(&why_none) == 0)
    throw InputError(field + " needs a GPU; " + host + " has none (" + library->path() + ": " + why_none + ")");
  return *library;
}

int HostPlacement::ranks_here(int ranks) const {
  return static_cast<int>(std::count_if(host_ranks.begin(), host_ranks.end(), [&](int r) { return r < ranks; }));
}

int HostPlacement::local_rank(int ranks) const {
  if (rank >= ranks) return -1;
  return static_cast<int>(std::lower_bound(host_ranks.begin(), host_ranks.end(), rank) - host_ranks.begin());
}

HostPlacement place_on_hosts(comm::Communicator& world) {
  HostPlacement placement;
  placement.host = this_host();
  placement.rank = world.rank();
  const auto local = world.split_by_host();  // ordered by world rank
  placement.host_ranks = local->allgather(world.rank());
  const auto leaders = world.allgather(placement.host_ranks.front());
  const std::set<int> distinct(leaders.begin(), leaders.end());
  placement.node = static_cast<int>(std::distance(distinct.begin(), distinct.find(placement.host_ranks.front())));
  return placement;
}

int gpu_of_rank(const config::Config& config, const HostPlacement& placement, int ranks, int gpus_here) {
  const int local = placement.local_rank(ranks);
  if (local < 0) return -1;
  if (const auto* list = gpu_list(config, placement.node))
    return (*list)[static_cast<std::size_t>(local) % list->size()];
  const bool shared = config.solver.communicator == config::DeviceExchange::kStagedMpi ||
                      gpus_bound_per_rank(gpus_here, placement.ranks_here(ranks));
  return shared && gpus_here > 0 ? local % gpus_here : local;
}

void check_devices(const config::Config& config, const HostPlacement& placement, int ranks) {
  if (!config::runs_on_gpu(config) || placement.local_rank(ranks) < 0) return;
  const std::string field = device_field(config);
  const auto library = load_gpu_library(field + ": \"gpu\"", placement.host);
  const int gpus = library.device_count();
  const int here = placement.ranks_here(ranks);
  const bool nccl = config.solver.communicator == config::DeviceExchange::kNccl;
  if (const auto* list = gpu_list(config, placement.node)) {
    for (std::size_t i = 0; i < list->size(); ++i)
      if ((*list)[i] >= gpus)
        throw InputError("solver.gpu: GPU " + std::to_string((*list)[i]) + " (node " + std::to_string(placement.node) +
                         "'s entry " + std::to_string(i) + ") is beyond " + placement.host + "'s " +
                         plural(gpus, "GPU", "GPUs") + " (0 to " + std::to_string(gpus - 1) + ")");
    if (nccl && here > static_cast<int>(list->size()))
      throw InputError("solver.gpu: " + plural(here, "rank runs", "ranks run") + " on " + placement.host +
                       " and its list names " + plural(static_cast<int>(list->size()), "GPU", "GPUs") +
                       "; NCCL takes one rank per GPU: name a GPU per rank, or set solver.communicator to \"mpi\"");
    if (nccl) {
      std::set<std::int32_t> distinct(list->begin(), list->begin() + here);
      if (static_cast<int>(distinct.size()) < here)
        throw InputError("solver.gpu: node " + std::to_string(placement.node) +
                         "'s list gives one GPU to two of its ranks; NCCL takes one rank per GPU: list each once, or "
                         "set solver.communicator to \"mpi\"");
    }
  } else if (nccl && here > gpus && !gpus_bound_per_rank(gpus, here)) {
    throw InputError("solver.communicator: " + plural(here, "rank runs", "ranks run") + " on " + placement.host +
                     ", which has " + plural(gpus, "GPU", "GPUs") + "; NCCL takes one rank per GPU: run at most " +
                     std::to_string(gpus) +
                     " per host, or set solver.communicator to \"mpi\" (the ranks then share the GPUs, exchanging "
                     "through host memory)");
  }
  check_device_support(config);
}

void check_device_support(const config::Config& config) {
  if (!config::runs_on_gpu(config)) return;
  for (const auto& layer : config.embeddings)
    if (layer.sharding == config::kParameterServerSharding)
      throw InputError("layers[" + layer.name +
                       "].device: \"gpu\": the parameter server keeps its table in host memory and serves it from "
                       "the host's CPUs (lib/ps); it has no GPU path in this build");
  if (!config.dense_layers.empty())
    throw InputError(config.dense_layers.front().path +
                     ": the dense layers run on the host (lib/model, OpenBLAS) and have no GPU path in this build; "
                     "pass --embedding-only to run the embedding layers on the GPU, or run on the host");
  if (config.eviction)
    throw InputError(
        "eviction: the eviction study follows the host tables' accesses (lib/sim) and has no GPU path in this "
        "build; remove the section, or run the layers on the host");
}

}  // namespace embscale::run
