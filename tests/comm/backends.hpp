// The Communicator implementations the comm tests run every case on: MPI with its native counts,
// MPI with the per-message limit lowered (so the large-count schedules run on small data), NCCL
// through the stand-in device library (tests/device/fake_nccl.cpp: real ranks over shared memory),
// and MPI staging device buffers through host memory (StagedCommunicator, on the same stand-in).
// The stand-in's "device" buffers are host memory, so a test's vectors serve every backend.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>
#include <ostream>
#include <string>

#include "comm/mpi_communicator.hpp"
#include "comm/nccl_communicator.hpp"
#include "comm/staged_communicator.hpp"
#include "device/device_library.hpp"

namespace embscale::comm::testing {

struct Backend {
  const char* name;
  std::size_t message_limit = 0;  // MPI: rows per message (0: MPI's own limit)
  bool nccl = false;
  bool staged = false;
};

inline std::string backend_name(const ::testing::TestParamInfo<Backend>& info) { return info.param.name; }
inline void PrintTo(const Backend& backend, std::ostream* out) { *out << backend.name; }

// The world over the backend: `mpi` always (NCCL's bootstrap and host side), `nccl` for NCCL.
class BackendWorld {
 public:
  explicit BackendWorld(const Backend& backend) : mpi_(MPI_COMM_WORLD) {
    if (backend.message_limit != 0) mpi_.set_max_message_rows(backend.message_limit);
    const auto fake = [] { return device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE); };
    if (backend.nccl) device_ = NcclCommunicator::bootstrap(mpi_, fake(), nullptr);
    if (backend.staged) device_ = std::make_unique<StagedCommunicator>(MPI_COMM_WORLD, fake(), nullptr);
  }
  Communicator& get() { return device_ ? *device_ : static_cast<Communicator&>(mpi_); }

 private:
  MpiCommunicator mpi_;
  std::unique_ptr<Communicator> device_;
};

}  // namespace embscale::comm::testing
