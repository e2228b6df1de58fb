// The Communicator over NCCL: one rank per GPU, every buffer in the current GPU's memory, the
// calls enqueued on one stream (the step's). It reaches NCCL through the device seam's nccl family
// (device/families/nccl.h), so libembscale links neither CUDA nor NCCL.
//
// What NCCL has, it does: bcast, allreduce, reduce, allgather, reduce_scatter_block are NCCL's own
// collectives (kAvg is ncclAvg). What it lacks is composed of grouped ncclSend/ncclRecv, as
// nccl-tests and TorchRec do: alltoall(v), allgatherv, gatherv, sendrecv, and reduce_scatter with
// unequal counts (one grouped ncclReduce per root). A self pair is a device copy.
//
// * Blocking calls enqueue and then synchronize the stream; non-blocking ones return a Request
//   whose wait() and test() ask an event recorded after the call.
// * Point-to-point has no tags: a pair's messages match in the order they were issued (NCCL's
//   rule); the tag arguments are accepted and ignored.
// * In place as the Communicator defines it is kept: allreduce and reduce with recv == send,
//   allgather with the rank's segment as input (NCCL's own in place), reduce_scatter(_block) with
//   MPI's in place (the result over the first segment) through a device scratch buffer. Any other
//   overlap is refused (a precondition), as are the exchanges' (alltoall(v), gatherv, allgatherv,
//   sendrecv) overlapping buffers and a send or receive to itself without its partner in the same
//   call, which NCCL would hang on.
// * Host values (the value helpers, broadcast_strings, agreements) go over host_communicator().
// * Traffic is counted as MpiCommunicator counts it, so a report's bytes mean the same on both.
// * host_communicator() is the MPI communicator it was bootstrapped on (a layer's set-up exchanges
//   host values there); barrier() synchronizes the stream, then barriers there.
#pragma once

#include <cstddef>
#include <memory>
#include <span>

#include "comm/communicator.hpp"
#include "device/device_library.hpp"
#include "device/device_resources.hpp"

namespace embscale::comm {

// NCCL's element type of a DataType (device/families/nccl.h keeps NCCL's values); bytes travel as
// uint8.
int nccl_data_type(DataType type);

class NcclCommunicator final : public Communicator {
 public:
  // Collective over `host` (borrowed; it must outlive the result): one NCCL rank per host rank, on
  // each rank's current device (set it first), enqueuing on `stream` (a device::Stream's handle,
  // borrowed; null: the default stream). Every rank first checks that it can use NCCL (the
  // library's nccl family, NCCL itself): when one cannot, every rank throws that rank's message
  // (comm::all_or_none) before any rank blocks in NCCL's initialisation. Then rank 0 makes the
  // unique id, `host` broadcasts it, and every rank joins.
  static std::unique_ptr<NcclCommunicator> bootstrap(Communicator& host, const device::DeviceLibrary& library,
                                                     void* stream);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  // Splits the host communicator and bootstraps NCCL over each part (NCCL's own split needs 2.18;
  // this works with every NCCL the family accepts). The part owns its host communicator.
  std::unique_ptr<Communicator> split(int color, int key) const override;
  std::unique_ptr<Communicator> split_by_host() const override;
  NativeHandle native_handle() const override { return {"nccl", comm_}; }
  void barrier() override;
  MemorySpace memory_space() const override { return MemorySpace::kDevice; }
  Communicator& host_communicator() override { return *host_; }

  void* stream() const noexcept { return stream_; }
  const device::DeviceLibrary& library() const noexcept { return library_; }
  // NCCL's version code (ncclGetVersion), e.g. 22809 for 2.28.9.
  int nccl_version() const noexcept { return version_; }

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
  NcclCommunicator(Communicator& host, std::unique_ptr<Communicator> owned_host, const device::DeviceLibrary& library,
                   void* stream);
  static std::unique_ptr<NcclCommunicator> join(Communicator& host, std::unique_ptr<Communicator> owned_host,
                                                const device::DeviceLibrary& library, void* stream);

  // Throws embscale::Error naming `what` when the family's call returned a failure.
  void check(int code, const char* what) const;
  // Device scratch of `bytes` for a call whose buffers overlap without being NCCL's in place: a
  // blocking call's is kept and reused (grown as needed); a non-blocking call's is its own, held
  // in `keep` until the request completes.
  void* scratch_for(std::size_t bytes, Request* request, std::shared_ptr<device::DeviceBuffer>& keep);
  // After enqueuing a call: synchronize (blocking), or hand a Request over that completes with it
  // and keeps `keep` (scratch the call still uses) alive until then.
  void complete(Request* request, std::shared_ptr<void> keep = nullptr);
  // ncclReduceScatter of `count` rows to each rank (through scratch when the buffers overlap
  // without being NCCL's in place), its traffic counted as `counted_as`.
  void reduce_scatter_equal(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                            CommOp counted_as, Request* request);
  // One grouped exchange: row counts and displacements per peer (send and receive sides), the
  // self pair copied on the device.
  void exchange(const void* send, std::span<const std::size_t> send_counts, std::span<const std::size_t> send_displs,
                void* recv, std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                std::size_t row_bytes);

  std::unique_ptr<device::DeviceBuffer> scratch_;  // blocking calls' (scratch_for)
  std::unique_ptr<Communicator> owned_host_;       // a split's host part; null for the bootstrapped one
  Communicator* host_;
  device::DeviceLibrary library_;
  void* stream_;
  void* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
  int version_ = 0;
};

}  // namespace embscale::comm
