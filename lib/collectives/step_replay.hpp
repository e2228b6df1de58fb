// A scheme's captured step (lib/collectives/step_capture.hpp) made runnable twice over, on the same
// buffers: through embscale's Communicator (the typed front end, as the scheme calls it) and
// through the bare MPI call that moves the same bytes with the same counts: the scalar MPI
// datatype (MPI_BYTE for byte rows) with counts and displacements in its elements, no row
// datatype, no agreement, no bookkeeping. The split communicators are made both ways:
// Communicator::split on one side, MPI_Comm_split on the other.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collectives/step_capture.hpp"
#include "comm/mpi_communicator.hpp"

namespace embscale::collectives {

class ReplayedStep {
 public:
  // Collective over world (makes the step's splits). Buffers are zeroed: reductions then sum
  // zeros, which stay zeros however often they run.
  ReplayedStep(SchemeStep step, comm::MpiCommunicator& world);
  ~ReplayedStep();
  ReplayedStep(const ReplayedStep&) = delete;
  ReplayedStep& operator=(const ReplayedStep&) = delete;

  std::size_t size() const noexcept { return calls_.size(); }
  const CollectiveCall& call(std::size_t k) const noexcept { return calls_[k].call; }
  // Bytes this rank sends to other ranks in call k, as the Communicator counts them (its stats).
  std::uint64_t bytes_sent(std::size_t k) const noexcept { return calls_[k].bytes_sent; }

  void run_embscale(std::size_t k);
  void run_bare(std::size_t k);

  // Fills every send buffer with a pattern of small integers (exact in any summation order), runs
  // each call bare, then through embscale, and compares what was received; records bytes_sent;
  // zeroes the buffers again. Returns "" or the first difference on this rank. Collective.
  std::string check();

 private:
  struct Call {
    CollectiveCall call;
    std::vector<std::uint64_t> send, recv;  // 8-byte aligned storage; send unused when in place
    // The bare form: element datatype, counts and displacements in elements.
    MPI_Datatype element = MPI_DATATYPE_NULL;
    std::vector<int> send_counts, send_displs, recv_counts, recv_displs;
    std::uint64_t bytes_sent = 0;
    const void* send_ptr() const noexcept { return call.in_place ? recv.data() : send.data(); }
    void* recv_ptr() noexcept { return recv.data(); }
  };
  void fill_pattern(Call& c, int world_rank);

  comm::MpiCommunicator& world_;
  std::vector<comm::Communicator*> embscale_comms_;  // [0]: world, then the splits
  std::vector<std::unique_ptr<comm::Communicator>> owned_splits_;
  std::vector<MPI_Comm> bare_comms_;  // [0]: MPI_COMM_WORLD's duplicate, then the splits
  std::vector<Call> calls_;
};

}  // namespace embscale::collectives
