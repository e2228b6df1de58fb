// The bare NCCL side of `embscale collectives --backend nccl`: NCCL's own calls (the device seam's
// nccl family) on the communicator the NcclCommunicator made, on its stream and buffers, so that
// the Communicator's overhead is measured against NCCL itself as the MPI backend's is against MPI
// (bare_mpi.hpp). What NCCL lacks (alltoall, alltoallv, sendrecv) is the grouped ncclSend/ncclRecv
// that nccl-tests itself runs for them.
#pragma once

#include <cstddef>
#include <span>

#include "collectives/collective.hpp"
#include "comm/nccl_communicator.hpp"

namespace embscale::collectives {

class BareNccl {
 public:
  explicit BareNccl(const comm::NcclCommunicator& comm);

  int rank() const noexcept { return rank_; }
  int size() const noexcept { return size_; }
  // Each enqueues one NCCL call (counts in elements of `type`; send/recv in bytes).
  void all_reduce(const void* send, void* recv, std::size_t count, comm::DataType type, comm::ReduceOp op) const;
  void reduce_scatter(const void* send, void* recv, std::size_t recv_count, comm::DataType type,
                      comm::ReduceOp op) const;
  void all_gather(const void* send, void* recv, std::size_t send_count, comm::DataType type) const;
  void broadcast(void* data, std::size_t count, comm::DataType type, int root) const;
  void reduce(const void* send, void* recv, std::size_t count, comm::DataType type, comm::ReduceOp op, int root) const;
  void group_start() const;
  void group_end() const;
  void send(const void* data, std::size_t bytes, int peer) const;
  void recv(void* data, std::size_t bytes, int peer) const;
  // A device copy on the stream (an exchange's self pair).
  void copy(void* to, const void* from, std::size_t bytes) const;
  // One grouped exchange in elements of `element_bytes`: counts and offsets per peer (offsets as
  // Layout::Counts has them), the self pair copied.
  void exchange(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_offsets,
                void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_offsets,
                std::size_t element_bytes) const;
  void synchronize() const;

 private:
  const device::DeviceLibrary& library_;
  void* comm_;
  void* stream_;
  int rank_, size_;
};

// The bytes of one element of `type`.
std::size_t element_bytes(comm::DataType type);

// Times calls [first, first + times.size()) of `bench` as bare NCCL: each enqueued, then the
// stream synchronized (a blocking call, as the NcclCommunicator's are), under bare_mpi.hpp's loop.
void run_bare_nccl(const CollectiveBench& bench, const CallArgs& args, std::size_t first, std::span<double> times);

}  // namespace embscale::collectives
