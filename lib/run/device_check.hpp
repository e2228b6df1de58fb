// Whether a GPU run can start here: the checks of a config's "device": "gpu" layers against the
// machine (a device library, GPUs, one per rank for NCCL, solver.gpu's indices) and against what
// runs on a GPU in this build. Host-only configs pass without loading anything, so CPU nodes and
// login nodes never touch CUDA.
//
// `run` and `sweep` call check_devices inside comm::run_agreed before the checks of the layers and
// of the ranks (after the config parsed and was found runnable as a whole), so that a machine
// without a GPU is the first thing a user hears of (exit 2, printed once, no report);
// `validate` calls only check_device_support (a login node has no GPU to check).
#pragma once

#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "device/device_library.hpp"

namespace embscale::run {

// Where a rank sits among the hosts of a job: the device check takes GPUs per host, and the checks
// run inside run_agreed, where no collective may be called (a rank that throws early would leave
// the others waiting in it). So this is gathered before, collectively.
struct HostPlacement {
  std::string host;             // this host's name
  int node = 0;                 // the host's index, hosts ordered by their lowest world rank
  int rank = 0;                 // this rank's in the world
  std::vector<int> host_ranks;  // the world ranks on this host, ascending

  // The ranks on this host of a run on the world's first `ranks` ranks (a sweep point's), and
  // this rank's index among them (its local rank; -1 when it is not in the run).
  int ranks_here(int ranks) const;
  int local_rank(int ranks) const;
};

// Collective over `world`.
HostPlacement place_on_hosts(comm::Communicator& world);

// The field that puts `config` on the GPU, for messages: "solver.device", or the first GPU
// layer's "layers[<name>].device".
std::string device_field(const config::Config& config);

// Whether the launcher bound GPUs to ranks, each process seeing only its own (srun --gpus-per-task,
// --gpu-bind, a CUDA_VISIBLE_DEVICES per rank): the process sees fewer GPUs than ranks run on the
// host while CUDA_VISIBLE_DEVICES is set. A rank then takes its local rank modulo what it sees, and
// whether two NCCL ranks share a GPU is NCCL's to say (it refuses a duplicate GPU by name).
bool gpus_bound_per_rank(int visible_gpus, int ranks_here);

// The device library, on a host with at least one GPU; else InputError "<field>: ..." naming the
// host and why (the loader's reasons, or the CUDA runtime's).
device::DeviceLibrary load_gpu_library(const std::string& field, const std::string& host);

// The GPU this rank takes in a GPU run of `config` on the world's first `ranks` ranks, of the
// `gpus_here` it sees: its node's solver.gpu list at its local rank, else its local rank (NCCL: one
// per GPU) or its local rank modulo `gpus_here` (staged MPI, or GPUs bound per rank). -1 when the
// rank is not in the run.
int gpu_of_rank(const config::Config& config, const HostPlacement& placement, int ranks, int gpus_here);

// InputError naming the field when a GPU run of `config` on the world's first `ranks` ranks cannot
// start on this rank: no device library (the loader's reasons), no GPU (the CUDA runtime's
// reason), more ranks on this host than GPUs with solver.communicator "nccl", a solver.gpu list
// shorter than the host's ranks or naming a GPU the host lacks. Then check_device_support.
// Nothing for a host-only config. Local: call it inside run_agreed.
void check_devices(const config::Config& config, const HostPlacement& placement, int ranks);

// InputError naming the field when a GPU run of `config` asks for a part that has no GPU path in
// this build: the parameter server, the dense layers, the eviction study. (Whether a layer's scheme
// and storage have one is the engine's to say: embedding::check_layers, which run and validate call
// anyway.) Nothing for a host-only config.
void check_device_support(const config::Config& config);

}  // namespace embscale::run
