// The Communicator of a GPU run over MPI: its buffers are device memory, each call stages them
// through page-locked host memory (device to host, the MPI call, host to device), so ranks may
// share a GPU (NCCL refuses two ranks on one device) and a GPU run can exchange over any MPI,
// at the cost of two copies per call. It is MpiCommunicator on the staged buffers: the same
// schedules, the same traffic counts.
//
// * Blocking calls copy in, call MPI and copy out on the calling thread; the stream (the step's)
//   is synchronized before MPI reads and after the results are copied, so the caller's queued work
//   is ordered with the exchange as NCCL's would be.
// * Non-blocking calls copy in and start MPI at the call; wait() or a successful test() finishes
//   MPI, then copies the results out. Each holds its own staging buffer until then.
// * host_communicator() is a plain MpiCommunicator over a duplicate of its MPI communicator (its
//   own tag space), for host values.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>

#include "comm/mpi_communicator.hpp"
#include "device/device_library.hpp"

namespace embscale::comm {

class StagedCommunicator final : public MpiCommunicator {
 public:
  // Over `comm` (not owned), on the current device, staging on `stream` (borrowed; null: the
  // default stream). Collective over `comm` (the host communicator is a duplicate).
  StagedCommunicator(MPI_Comm comm, const device::DeviceLibrary& library, void* stream);
  ~StagedCommunicator() override;

  std::unique_ptr<Communicator> split(int color, int key) const override;
  std::unique_ptr<Communicator> split_by_host() const override;
  MemorySpace memory_space() const override { return MemorySpace::kDevice; }
  Communicator& host_communicator() override { return *host_; }

 protected:
  void do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) override;
  void do_allreduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                    Request* request) override;
  void do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts, RowType type,
                         ReduceOp op, Request* request) override;
  void do_gatherv(const void* send, std::size_t send_count, void* recv, std::span<const std::size_t> recv_counts,
                  RowType type, int root, Request* request) override;
  void do_allgatherv(const void* send, std::size_t send_count, void* recv, std::span<const std::size_t> recv_counts,
                     RowType type, Request* request) override;
  void do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                    std::span<const std::size_t> recv_counts, RowType type, Request* request) override;
  void do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) override;
  void do_allgather(const void* send, void* recv, std::size_t count, RowType type, Request* request) override;
  void do_reduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op, int root,
                 Request* request) override;
  void do_reduce_scatter_block(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                               Request* request) override;
  void do_sendrecv(const void* send, std::size_t send_count, int dest, int send_tag, void* recv, std::size_t recv_count,
                   int source, int recv_tag, RowType type, Request* request) override;
  void do_send(const void* data, std::size_t count, RowType type, int dest, int tag, Request* request) override;
  void do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) override;

 private:
  StagedCommunicator(MPI_Comm comm, bool owned, const device::DeviceLibrary& library, void* stream);

  // One staged call: `send_bytes` of `send` copied to host, `call(host_send, host_recv)` (the MPI
  // implementation's own hook, handed `request`), then `recv_bytes` of the host result copied to
  // `recv` when it completes. `in_place`: send and recv are one buffer (one host copy for both).
  using MpiCall = std::function<void(const void* host_send, void* host_recv, Request* request)>;
  void staged(const void* send, std::size_t send_bytes, void* recv, std::size_t recv_bytes, bool in_place,
              Request* request, const MpiCall& call);

  device::DeviceLibrary library_;
  void* stream_;
  std::unique_ptr<MpiCommunicator> host_;
  // The blocking calls' staging buffer, grown as needed (page-locked: pinned copies, no bounce).
  void* pinned_ = nullptr;
  std::size_t pinned_bytes_ = 0;
};

}  // namespace embscale::comm
