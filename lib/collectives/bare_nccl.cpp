#include "collectives/bare_nccl.hpp"

#include "collectives/bare_mpi.hpp"
#include "collectives/element_type.hpp"
#include "device/families/nccl.h"

namespace embscale::collectives {

BareNccl::BareNccl(const comm::NcclCommunicator& comm)
    : library_(comm.library()), comm_(const_cast<void*>(comm.native_handle().handle)), stream_(comm.stream()),
      rank_(comm.rank()), size_(comm.size()) {}

void BareNccl::all_reduce(const void* send, void* recv, std::size_t count, comm::DataType type,
                          comm::ReduceOp op) const {
  library_.check(library_.functions().nccl_all_reduce(send, recv, count, comm::nccl_data_type(type),
                                                      static_cast<int>(op), comm_, stream_),
                 "ncclAllReduce");
}

void BareNccl::reduce_scatter(const void* send, void* recv, std::size_t recv_count, comm::DataType type,
                              comm::ReduceOp op) const {
  library_.check(library_.functions().nccl_reduce_scatter(send, recv, recv_count, comm::nccl_data_type(type),
                                                          static_cast<int>(op), comm_, stream_),
                 "ncclReduceScatter");
}

void BareNccl::all_gather(const void* send, void* recv, std::size_t send_count, comm::DataType type) const {
  library_.check(
      library_.functions().nccl_all_gather(send, recv, send_count, comm::nccl_data_type(type), comm_, stream_),
      "ncclAllGather");
}

void BareNccl::broadcast(void* data, std::size_t count, comm::DataType type, int root) const {
  library_.check(
      library_.functions().nccl_broadcast(data, data, count, comm::nccl_data_type(type), root, comm_, stream_),
      "ncclBroadcast");
}

void BareNccl::reduce(const void* send, void* recv, std::size_t count, comm::DataType type, comm::ReduceOp op,
                      int root) const {
  library_.check(
      library_.functions().nccl_reduce(send, rank_ == root ? recv : nullptr, count, comm::nccl_data_type(type),
                                       static_cast<int>(op), root, comm_, stream_),
      "ncclReduce");
}

void BareNccl::group_start() const { library_.check(library_.functions().nccl_group_start(), "ncclGroupStart"); }
void BareNccl::group_end() const { library_.check(library_.functions().nccl_group_end(), "ncclGroupEnd"); }

void BareNccl::send(const void* data, std::size_t bytes, int peer) const {
  if (bytes == 0) return;
  library_.check(library_.functions().nccl_send(data, bytes, EMBSCALE_NCCL_UINT8, peer, comm_, stream_), "ncclSend");
}

void BareNccl::recv(void* data, std::size_t bytes, int peer) const {
  if (bytes == 0) return;
  library_.check(library_.functions().nccl_recv(data, bytes, EMBSCALE_NCCL_UINT8, peer, comm_, stream_), "ncclRecv");
}

void BareNccl::copy(void* to, const void* from, std::size_t bytes) const {
  if (bytes == 0 || to == from) return;
  library_.check(library_.functions().copy_async(to, from, static_cast<std::int64_t>(bytes), stream_), "device copy");
}

void BareNccl::exchange(const void* send, std::span<const std::size_t> send_counts,
                        std::span<const std::size_t> send_offsets, void* recv, std::span<const std::size_t> recv_counts,
                        std::span<const std::size_t> recv_offsets, std::size_t element_bytes) const {
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  group_start();
  for (int peer = 0; peer < size_; ++peer) {
    if (peer == rank_) continue;
    const auto p = static_cast<std::size_t>(peer);
    this->send(in + send_offsets[p] * element_bytes, send_counts[p] * element_bytes, peer);
    this->recv(out + recv_offsets[p] * element_bytes, recv_counts[p] * element_bytes, peer);
  }
  group_end();
  const auto me = static_cast<std::size_t>(rank_);
  copy(out + recv_offsets[me] * element_bytes, in + send_offsets[me] * element_bytes, send_counts[me] * element_bytes);
}

std::size_t element_bytes(comm::DataType type) {
  std::size_t bytes = 0;
  visit_element_type(type, [&]<class T>(std::type_identity<T>) { bytes = sizeof(T); });
  return bytes;
}

void BareNccl::synchronize() const {
  library_.check(library_.functions().stream_synchronize(stream_), "stream synchronize");
}

void run_bare_nccl(const CollectiveBench& bench, const CallArgs& args, std::size_t first, std::span<double> times) {
  timed_calls(args, first, times, [&](std::size_t k) {
    bench.enqueue_bare_nccl(args, k);
    args.nccl->synchronize();
  });
}

}  // namespace embscale::collectives
