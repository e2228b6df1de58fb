#include "comm/staged_communicator.hpp"

#include <cstring>
#include <numeric>
#include <utility>

#include "core/error.hpp"

namespace embscale::comm {
namespace {

std::size_t total_rows(std::span<const std::size_t> counts) {
  return std::accumulate(counts.begin(), counts.end(), std::size_t{0});
}

// Page-locked host memory from the device library, freed with its owner.
class PinnedBuffer {
 public:
  PinnedBuffer(const device::DeviceLibrary& library, std::size_t bytes) : library_(library) {
    library_.check(library_.functions().malloc_host(static_cast<std::int64_t>(bytes), &data_),
                   "page-locked staging buffer");
  }
  ~PinnedBuffer() { (void)library_.functions().free_host(data_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  void* data() const { return data_; }

 private:
  device::DeviceLibrary library_;
  void* data_ = nullptr;
};

// A started MPI call on staged buffers: completes it, then runs the copy back (once).
class PendingStaged final : public PendingOperation {
 public:
  PendingStaged(Request inner, std::unique_ptr<PinnedBuffer> buffer, std::function<void()> copy_back)
      : buffer_(std::move(buffer)), inner_(std::move(inner)), copy_back_(std::move(copy_back)) {}
  void wait() override {
    inner_.wait();
    finish();
  }
  bool test() override {
    if (!inner_.test()) return false;
    finish();
    return true;
  }

 private:
  void finish() {
    if (copy_back_) std::exchange(copy_back_, nullptr)();
  }
  std::unique_ptr<PinnedBuffer> buffer_;  // first: destroyed after inner_, which may still use it
  Request inner_;
  std::function<void()> copy_back_;
};

}  // namespace

StagedCommunicator::StagedCommunicator(MPI_Comm comm, const device::DeviceLibrary& library, void* stream)
    : StagedCommunicator(comm, false, library, stream) {}

StagedCommunicator::StagedCommunicator(MPI_Comm comm, bool owned, const device::DeviceLibrary& library, void* stream)
    : MpiCommunicator(comm, owned), library_(library), stream_(stream), host_(MpiCommunicator::duplicate(comm)) {}

StagedCommunicator::~StagedCommunicator() {
  host_.reset();  // before the base frees a split's communicator
  (void)library_.functions().free_host(pinned_);
}

std::unique_ptr<Communicator> StagedCommunicator::split(int color, int key) const {
  MPI_Comm out;
  check_mpi(MPI_Comm_split(mpi_comm(), color, key, &out), "MPI_Comm_split");
  return std::unique_ptr<Communicator>(new StagedCommunicator(out, true, library_, stream_));
}

std::unique_ptr<Communicator> StagedCommunicator::split_by_host() const {
  MPI_Comm out;
  check_mpi(MPI_Comm_split_type(mpi_comm(), MPI_COMM_TYPE_SHARED, rank(), MPI_INFO_NULL, &out), "MPI_Comm_split_type");
  return std::unique_ptr<Communicator>(new StagedCommunicator(out, true, library_, stream_));
}

void StagedCommunicator::staged(const void* send, std::size_t send_bytes, void* recv, std::size_t recv_bytes,
                                bool in_place, Request* request, const MpiCall& call) {
  const auto& f = library_.functions();
  // Host layout: [send copy | recv] (one region when in place).
  const std::size_t recv_at = in_place ? 0 : (send_bytes + 255) / 256 * 256;
  const std::size_t total = in_place ? std::max(send_bytes, recv_bytes) : recv_at + recv_bytes;
  std::unique_ptr<PinnedBuffer> own;
  void* host = nullptr;
  if (request != nullptr) {
    own = std::make_unique<PinnedBuffer>(library_, total);
    host = own->data();
  } else {
    if (total > pinned_bytes_) {
      (void)f.free_host(pinned_);
      pinned_ = nullptr;
      pinned_bytes_ = 0;
      library_.check(f.malloc_host(static_cast<std::int64_t>(total), &pinned_), "page-locked staging buffer");
      pinned_bytes_ = total;
    }
    host = pinned_;
  }
  auto* host_bytes = static_cast<std::byte*>(host);
  void* host_recv = host_bytes + recv_at;
  if (send_bytes > 0)
    library_.check(f.copy_async(host, send, static_cast<std::int64_t>(send_bytes), stream_), "staging: device to host");
  library_.check(f.stream_synchronize(stream_), "staging: device to host");
  const auto copy_back = [this, recv, host_recv, recv_bytes] {
    const auto& g = library_.functions();
    if (recv_bytes > 0)
      library_.check(g.copy_async(recv, host_recv, static_cast<std::int64_t>(recv_bytes), stream_),
                     "staging: host to device");
    library_.check(g.stream_synchronize(stream_), "staging: host to device");
  };
  if (request == nullptr) {
    call(host, host_recv, nullptr);
    copy_back();
    return;
  }
  Request inner;
  call(host, host_recv, &inner);
  *request = Request(std::make_unique<PendingStaged>(std::move(inner), std::move(own), copy_back));
}

void StagedCommunicator::do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) {
  const std::size_t bytes = count * type.row_bytes;
  staged(data, bytes, data, bytes, true, request,
         [&](const void*, void* host, Request* r) { MpiCommunicator::do_bcast(host, count, type, root, r); });
}

void StagedCommunicator::do_allreduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                                      Request* request) {
  const std::size_t bytes = count * type.row_bytes;
  staged(send, bytes, recv, bytes, false, request, [&](const void* host_send, void* host_recv, Request* r) {
    MpiCommunicator::do_allreduce(host_send, host_recv, count, type, op, r);
  });
}

void StagedCommunicator::do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                                           RowType type, ReduceOp op, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size()), "reduce_scatter needs one count per rank");
  const std::size_t own = recv_counts[static_cast<std::size_t>(rank())];
  staged(send, total_rows(recv_counts) * type.row_bytes, recv, own * type.row_bytes, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_reduce_scatter(host_send, host_recv, recv_counts, type, op, r);
         });
}

void StagedCommunicator::do_gatherv(const void* send, std::size_t send_count, void* recv,
                                    std::span<const std::size_t> recv_counts, RowType type, int root,
                                    Request* request) {
  const std::size_t recv_bytes = rank() == root ? total_rows(recv_counts) * type.row_bytes : 0;
  staged(send, send_count * type.row_bytes, recv, recv_bytes, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_gatherv(host_send, send_count, host_recv, recv_counts, type, root, r);
         });
}

void StagedCommunicator::do_allgatherv(const void* send, std::size_t send_count, void* recv,
                                       std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  staged(send, send_count * type.row_bytes, recv, total_rows(recv_counts) * type.row_bytes, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_allgatherv(host_send, send_count, host_recv, recv_counts, type, r);
         });
}

void StagedCommunicator::do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                                      std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  staged(send, total_rows(send_counts) * type.row_bytes, recv, total_rows(recv_counts) * type.row_bytes, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_alltoallv(host_send, send_counts, host_recv, recv_counts, type, r);
         });
}

void StagedCommunicator::do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  const std::size_t bytes = count * static_cast<std::size_t>(size()) * type.row_bytes;
  staged(send, bytes, recv, bytes, false, request, [&](const void* host_send, void* host_recv, Request* r) {
    MpiCommunicator::do_alltoall(host_send, host_recv, count, type, r);
  });
}

void StagedCommunicator::do_allgather(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  const std::size_t part = count * type.row_bytes;
  staged(send, part, recv, part * static_cast<std::size_t>(size()), false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_allgather(host_send, host_recv, count, type, r);
         });
}

void StagedCommunicator::do_reduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op, int root,
                                   Request* request) {
  const std::size_t bytes = count * type.row_bytes;
  staged(send, bytes, recv, rank() == root ? bytes : 0, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_reduce(host_send, host_recv, count, type, op, root, r);
         });
}

void StagedCommunicator::do_reduce_scatter_block(const void* send, void* recv, std::size_t count, RowType type,
                                                 ReduceOp op, Request* request) {
  const std::size_t part = count * type.row_bytes;
  staged(send, part * static_cast<std::size_t>(size()), recv, part, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_reduce_scatter_block(host_send, host_recv, count, type, op, r);
         });
}

void StagedCommunicator::do_sendrecv(const void* send, std::size_t send_count, int dest, int send_tag, void* recv,
                                     std::size_t recv_count, int source, int recv_tag, RowType type, Request* request) {
  staged(send, send_count * type.row_bytes, recv, recv_count * type.row_bytes, false, request,
         [&](const void* host_send, void* host_recv, Request* r) {
           MpiCommunicator::do_sendrecv(host_send, send_count, dest, send_tag, host_recv, recv_count, source, recv_tag,
                                        type, r);
         });
}

void StagedCommunicator::do_send(const void* data, std::size_t count, RowType type, int dest, int tag,
                                 Request* request) {
  staged(data, count * type.row_bytes, nullptr, 0, false, request, [&](const void* host_send, void*, Request* r) {
    MpiCommunicator::do_send(host_send, count, type, dest, tag, r);
  });
}

void StagedCommunicator::do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) {
  staged(nullptr, 0, data, count * type.row_bytes, false, request, [&](const void*, void* host_recv, Request* r) {
    MpiCommunicator::do_recv(host_recv, count, type, source, tag, r);
  });
}

}  // namespace embscale::comm
