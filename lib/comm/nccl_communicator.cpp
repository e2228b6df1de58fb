#include "comm/nccl_communicator.hpp"

#include <exception>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "comm/failure.hpp"
#include "core/error.hpp"
#include "device/device_resources.hpp"

namespace embscale::comm {

int nccl_data_type(DataType type) {
  switch (type) {
    case DataType::kInt8: return EMBSCALE_NCCL_INT8;
    case DataType::kUInt8:
    case DataType::kBytes: return EMBSCALE_NCCL_UINT8;
    case DataType::kInt32: return EMBSCALE_NCCL_INT32;
    case DataType::kUInt32: return EMBSCALE_NCCL_UINT32;
    case DataType::kInt64: return EMBSCALE_NCCL_INT64;
    case DataType::kUInt64: return EMBSCALE_NCCL_UINT64;
    case DataType::kFloat16: return EMBSCALE_NCCL_FLOAT16;
    case DataType::kFloat32: return EMBSCALE_NCCL_FLOAT32;
    case DataType::kFloat64: return EMBSCALE_NCCL_FLOAT64;
    case DataType::kBFloat16: return EMBSCALE_NCCL_BFLOAT16;
  }
  return EMBSCALE_NCCL_UINT8;
}

using detail::bytes_to_others;

namespace {

// ReduceOp's order is NCCL's (communicator.hpp), so the value passes as it is.
static_assert(static_cast<int>(ReduceOp::kSum) == EMBSCALE_NCCL_SUM &&
              static_cast<int>(ReduceOp::kAvg) == EMBSCALE_NCCL_AVG);
int nccl_op(ReduceOp op) { return static_cast<int>(op); }

// A reduction's scalars: `rows` rows of `type` as elements of its scalar type.
struct Scalars {
  std::uint64_t count;
  std::size_t scalar_bytes;
  int dtype;
};
Scalars scalars_of(std::size_t rows, RowType type, const char* operation) {
  if (type.type == DataType::kBytes) throw Error(std::string(operation) + " needs an arithmetic type, not bytes");
  return {rows * type.row_values, type.row_bytes / type.row_values, nccl_data_type(type.type)};
}

const std::byte* bytes(const void* p) { return static_cast<const std::byte*>(p); }
std::byte* bytes(void* p) { return static_cast<std::byte*>(p); }

bool overlap(const void* a, std::size_t a_bytes, const void* b, std::size_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && x < y + b_bytes && y < x + a_bytes;
}

std::vector<std::size_t> displacements(std::span<const std::size_t> counts) {
  std::vector<std::size_t> out(counts.size(), 0);
  for (std::size_t i = 1; i < counts.size(); ++i) out[i] = out[i - 1] + counts[i - 1];
  return out;
}

// Completes with its event; holds what the call still reads or writes until then.
class PendingNccl final : public PendingOperation {
 public:
  PendingNccl(device::Event event, std::shared_ptr<void> keep) : event_(std::move(event)), keep_(std::move(keep)) {}
  void wait() override { event_.synchronize(); }
  bool test() override { return event_.done(); }

 private:
  device::Event event_;
  std::shared_ptr<void> keep_;
};

// ncclGroupStart ... ncclGroupEnd around a scope. The end also runs when the scope throws (NCCL has
// no cancel: the group depth must stay balanced); the calls queued before the failure are then
// launched without their partners, and the run ends through the thrown error, not through them.
class Group {
 public:
  explicit Group(const device::DeviceLibrary& library) : library_(library) {
    library_.check(library_.functions().nccl_group_start(), "ncclGroupStart");
  }
  void end() {
    ended_ = true;
    library_.check(library_.functions().nccl_group_end(), "ncclGroupEnd");
  }
  ~Group() {
    if (!ended_) (void)library_.functions().nccl_group_end();
  }
  Group(const Group&) = delete;
  Group& operator=(const Group&) = delete;

 private:
  const device::DeviceLibrary& library_;
  bool ended_ = false;
};

}  // namespace

NcclCommunicator::NcclCommunicator(Communicator& host, std::unique_ptr<Communicator> owned_host,
                                   const device::DeviceLibrary& library, void* stream)
    : owned_host_(std::move(owned_host)), host_(&host), library_(library), stream_(stream), rank_(host.rank()),
      size_(host.size()) {}

std::unique_ptr<NcclCommunicator> NcclCommunicator::bootstrap(Communicator& host, const device::DeviceLibrary& library,
                                                              void* stream) {
  return join(host, nullptr, library, stream);
}

std::unique_ptr<NcclCommunicator> NcclCommunicator::join(Communicator& host, std::unique_ptr<Communicator> owned_host,
                                                         const device::DeviceLibrary& library, void* stream) {
  std::unique_ptr<NcclCommunicator> self(new NcclCommunicator(host, std::move(owned_host), library, stream));
  std::array<std::byte, EMBSCALE_CUDA_NCCL_ID_BYTES> id{};
  // Every rank can use NCCL, or every rank hears why one cannot, before anyone blocks in its init.
  all_or_none(host, [&] {
    try {
      const auto& f = library.kernels(device::KernelFamily::nccl);
      library.check(f.nccl_version(&self->version_), "NCCL");
      if (host.rank() == 0) library.check(f.nccl_unique_id(id.data()), "ncclGetUniqueId");
    } catch (const Error& e) {
      throw Error("rank " + std::to_string(host.rank()) + " cannot use NCCL: " + e.what());
    }
  });
  host.bcast(std::span<std::byte>(id), 0);
  try {
    all_or_none(host, [&] {
      library.check(library.functions().nccl_comm_create(id.data(), host.size(), host.rank(), &self->comm_),
                    "ncclCommInitRank");
    });
  } catch (...) {
    // Some rank did not join: the others' communicators can never complete work, so they are
    // aborted, not destroyed (a destroy would wait for the missing peers).
    (void)library.functions().nccl_comm_abort(std::exchange(self->comm_, nullptr));
    throw;
  }
  return self;
}

NcclCommunicator::~NcclCommunicator() {
  if (comm_ == nullptr) return;
  // Unwinding an error that may be this rank's alone: its peers may be blocked in a collective
  // this rank will never join, and a destroy (or the queued work) would wait for them. Abort
  // instead, so the error reaches the job's abort rather than a hang.
  if (std::uncaught_exceptions() > 0) {
    (void)library_.functions().nccl_comm_abort(comm_);
    return;
  }
  // Work still queued would use the communicator: let it finish first (a failed call's stream
  // reports its error here, which a destructor cannot raise).
  (void)library_.functions().stream_synchronize(stream_);
  (void)library_.functions().nccl_comm_destroy(comm_);
}

std::unique_ptr<Communicator> NcclCommunicator::split(int color, int key) const {
  auto part = host_->split(color, key);
  Communicator& host = *part;
  return join(host, std::move(part), library_, stream_);
}

std::unique_ptr<Communicator> NcclCommunicator::split_by_host() const {
  auto part = host_->split_by_host();
  Communicator& host = *part;
  return join(host, std::move(part), library_, stream_);
}

void NcclCommunicator::barrier() {
  stats().record(CommOp::kBarrier, 0, 0);
  check(library_.functions().stream_synchronize(stream_), "barrier: stream synchronize");
  host_->barrier();
}

void NcclCommunicator::check(int code, const char* what) const { library_.check(code, what); }

void* NcclCommunicator::scratch_for(std::size_t bytes, Request* request, std::shared_ptr<device::DeviceBuffer>& keep) {
  if (request != nullptr) {  // the request's own, alive until it completes
    keep = std::make_shared<device::DeviceBuffer>(library_, static_cast<std::int64_t>(bytes));
    return keep->data();
  }
  // A blocking call's stream is synchronized before it returns, so the next call may reuse it.
  if (!scratch_ || scratch_->bytes() < static_cast<std::int64_t>(bytes))
    scratch_ = std::make_unique<device::DeviceBuffer>(library_, static_cast<std::int64_t>(bytes));
  return scratch_->data();
}

void NcclCommunicator::complete(Request* request, std::shared_ptr<void> keep) {
  if (request == nullptr) {
    check(library_.functions().stream_synchronize(stream_), "NCCL call (stream synchronize)");
    return;
  }
  device::Event event(library_);
  event.record(stream_);
  *request = Request(std::make_unique<PendingNccl>(std::move(event), std::move(keep)));
}

void NcclCommunicator::exchange(const void* send, std::span<const std::size_t> send_counts,
                                std::span<const std::size_t> send_displs, void* recv,
                                std::span<const std::size_t> recv_counts, std::span<const std::size_t> recv_displs,
                                std::size_t row_bytes) {
  const auto& f = library_.functions();
  const auto self = static_cast<std::size_t>(rank_);
  EMBSCALE_EXPECTS(send_counts[self] == recv_counts[self], "exchange: the rows a rank keeps differ on the two sides");
  const auto extent = [](std::span<const std::size_t> counts, std::span<const std::size_t> displs) {
    std::size_t end = 0;
    for (std::size_t p = 0; p < counts.size(); ++p)
      if (counts[p] > 0) end = std::max(end, displs[p] + counts[p]);
    return end;
  };
  // In place (allgatherv's own segment already in recv) is the one overlap allowed.
  const bool in_place = bytes(send) + send_displs[self] * row_bytes == bytes(recv) + recv_displs[self] * row_bytes;
  EMBSCALE_EXPECTS(in_place || !overlap(send, extent(send_counts, send_displs) * row_bytes, recv,
                                        extent(recv_counts, recv_displs) * row_bytes),
                   "exchange: the send and receive buffers overlap");
  Group group(library_);
  for (std::size_t peer = 0; peer < send_counts.size(); ++peer) {
    if (peer == self) continue;
    // Zero-row pairs are skipped on both sides: both ends know the count.
    if (send_counts[peer] > 0)
      check(f.nccl_send(bytes(send) + send_displs[peer] * row_bytes, send_counts[peer] * row_bytes, EMBSCALE_NCCL_UINT8,
                        static_cast<int>(peer), comm_, stream_),
            "ncclSend");
    if (recv_counts[peer] > 0)
      check(f.nccl_recv(bytes(recv) + recv_displs[peer] * row_bytes, recv_counts[peer] * row_bytes, EMBSCALE_NCCL_UINT8,
                        static_cast<int>(peer), comm_, stream_),
            "ncclRecv");
  }
  group.end();
  const std::size_t own = send_counts[self] * row_bytes;
  const void* from = bytes(send) + send_displs[self] * row_bytes;
  void* to = bytes(recv) + recv_displs[self] * row_bytes;
  if (own > 0 && from != to)
    check(f.copy_async(to, from, static_cast<std::int64_t>(own), stream_), "device copy of the self pair");
}

void NcclCommunicator::do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) {
  const std::uint64_t payload = count * type.row_bytes;
  stats().record(CommOp::kBcast, rank_ == root ? payload * static_cast<std::uint64_t>(size_ - 1) : 0,
                 rank_ == root ? 0 : payload);
  check(library_.functions().nccl_broadcast(data, data, payload, EMBSCALE_NCCL_UINT8, root, comm_, stream_),
        "ncclBroadcast");
  complete(request);
}

void NcclCommunicator::do_allreduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                                    Request* request) {
  const auto s = scalars_of(count, type, "allreduce");
  const std::size_t payload = s.count * s.scalar_bytes;
  stats().record(CommOp::kAllreduce, payload, payload);
  EMBSCALE_EXPECTS(send == recv || !overlap(send, payload, recv, payload), "allreduce: buffers overlap, not in place");
  check(library_.functions().nccl_all_reduce(send, recv, s.count, s.dtype, nccl_op(op), comm_, stream_),
        "ncclAllReduce");
  complete(request);
}

void NcclCommunicator::do_reduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op, int root,
                                 Request* request) {
  const auto s = scalars_of(count, type, "reduce");
  const std::size_t payload = s.count * s.scalar_bytes;
  const bool is_root = rank_ == root;
  stats().record(CommOp::kReduce, is_root ? 0 : payload, is_root ? payload : 0);
  EMBSCALE_EXPECTS(!is_root || send == recv || !overlap(send, payload, recv, payload),
                   "reduce: buffers overlap, not in place");
  check(library_.functions().nccl_reduce(send, is_root ? recv : nullptr, s.count, s.dtype, nccl_op(op), root, comm_,
                                         stream_),
        "ncclReduce");
  complete(request);
}

void NcclCommunicator::reduce_scatter_equal(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                                            CommOp counted_as, Request* request) {
  const auto s = scalars_of(count, type, comm_op_name(counted_as));
  const std::size_t part = s.count * s.scalar_bytes;
  const std::size_t total = part * static_cast<std::size_t>(size_);
  stats().record(counted_as, total, part);
  const auto& f = library_.functions();
  // NCCL's in place is recv == send + rank * part; the Communicator's (MPI's) is recv == send.
  // Any other overlap goes through scratch, then a device copy.
  const bool nccl_in_place = recv == bytes(send) + static_cast<std::size_t>(rank_) * part;
  if (nccl_in_place || !overlap(send, total, recv, part)) {
    check(f.nccl_reduce_scatter(send, recv, s.count, s.dtype, nccl_op(op), comm_, stream_), "ncclReduceScatter");
    complete(request);
    return;
  }
  std::shared_ptr<device::DeviceBuffer> keep;
  void* scratch = scratch_for(part, request, keep);
  check(f.nccl_reduce_scatter(send, scratch, s.count, s.dtype, nccl_op(op), comm_, stream_), "ncclReduceScatter");
  check(f.copy_async(recv, scratch, static_cast<std::int64_t>(part), stream_), "reduce_scatter copy");
  complete(request, keep);
}

void NcclCommunicator::do_reduce_scatter_block(const void* send, void* recv, std::size_t count, RowType type,
                                               ReduceOp op, Request* request) {
  reduce_scatter_equal(send, recv, count, type, op, CommOp::kReduceScatterBlock, request);
}

void NcclCommunicator::do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                                         RowType type, ReduceOp op, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "reduce_scatter needs one count per rank");
  bool equal = true;
  for (const std::size_t c : recv_counts) equal = equal && c == recv_counts[0];
  if (equal) {  // the block form, counted as the caller's operation
    reduce_scatter_equal(send, recv, recv_counts[0], type, op, CommOp::kReduceScatter, request);
    return;
  }
  // Unequal parts: one reduce per root, issued together.
  const auto own = scalars_of(recv_counts[static_cast<std::size_t>(rank_)], type, "reduce_scatter");
  const auto displs = displacements(recv_counts);
  std::size_t total_rows = 0;
  for (const std::size_t c : recv_counts) total_rows += c;
  stats().record(CommOp::kReduceScatter, total_rows * type.row_bytes, own.count * own.scalar_bytes);
  const bool overlapping = overlap(send, total_rows * type.row_bytes, recv, own.count * own.scalar_bytes);
  std::shared_ptr<device::DeviceBuffer> keep;
  void* target = overlapping ? scratch_for(own.count * own.scalar_bytes, request, keep) : recv;
  const auto& f = library_.functions();
  {
    Group group(library_);
    for (int root = 0; root < size_; ++root) {
      const auto r = static_cast<std::size_t>(root);
      if (recv_counts[r] == 0) continue;
      check(f.nccl_reduce(bytes(send) + displs[r] * type.row_bytes, root == rank_ ? target : nullptr,
                          recv_counts[r] * type.row_values, own.dtype, nccl_op(op), root, comm_, stream_),
            "ncclReduce");
    }
    group.end();
  }
  if (overlapping && own.count > 0)
    check(f.copy_async(recv, target, static_cast<std::int64_t>(own.count * own.scalar_bytes), stream_),
          "reduce_scatter copy");
  complete(request, keep);
}

void NcclCommunicator::do_allgather(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  const std::size_t part = count * type.row_bytes;
  const std::uint64_t payload = part * static_cast<std::uint64_t>(size_ - 1);
  stats().record(CommOp::kAllgather, payload, payload);
  const auto& f = library_.functions();
  const std::size_t total = part * static_cast<std::size_t>(size_);
  // NCCL's in place: send == recv + rank * part (the Communicator's too). Another overlap: scratch.
  if (send == bytes(recv) + static_cast<std::size_t>(rank_) * part || !overlap(send, part, recv, total)) {
    check(f.nccl_all_gather(send, recv, part, EMBSCALE_NCCL_UINT8, comm_, stream_), "ncclAllGather");
    complete(request);
    return;
  }
  std::shared_ptr<device::DeviceBuffer> keep;
  void* scratch = scratch_for(part, request, keep);
  check(f.copy_async(scratch, send, static_cast<std::int64_t>(part), stream_), "allgather copy");
  check(f.nccl_all_gather(scratch, recv, part, EMBSCALE_NCCL_UINT8, comm_, stream_), "ncclAllGather");
  complete(request, keep);
}

void NcclCommunicator::do_gatherv(const void* send, std::size_t send_count, void* recv,
                                  std::span<const std::size_t> recv_counts, RowType type, int root, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "gatherv needs one count per rank");
  EMBSCALE_EXPECTS(recv_counts[static_cast<std::size_t>(rank_)] == send_count,
                   "gatherv: own count differs from recv_counts");
  const bool is_root = rank_ == root;
  stats().record(CommOp::kGatherv, is_root ? 0 : send_count * type.row_bytes,
                 is_root ? bytes_to_others(recv_counts, rank_, type.row_bytes) : 0);
  const std::vector<std::size_t> none(static_cast<std::size_t>(size_), 0);
  std::vector<std::size_t> send_counts = none, send_displs = none;
  if (!is_root) send_counts[static_cast<std::size_t>(root)] = send_count;
  else send_counts[static_cast<std::size_t>(rank_)] = send_count;  // the self pair: a copy
  if (is_root) {
    exchange(send, send_counts, send_displs, recv, recv_counts, displacements(recv_counts), type.row_bytes);
  } else {
    exchange(send, send_counts, send_displs, recv, none, none, type.row_bytes);
  }
  complete(request);
}

void NcclCommunicator::do_allgatherv(const void* send, std::size_t send_count, void* recv,
                                     std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "allgatherv needs one count per rank");
  EMBSCALE_EXPECTS(recv_counts[static_cast<std::size_t>(rank_)] == send_count,
                   "allgatherv: own count differs from recv_counts");
  stats().record(CommOp::kAllgatherv, send_count * type.row_bytes * static_cast<std::size_t>(size_ - 1),
                 bytes_to_others(recv_counts, rank_, type.row_bytes));
  const std::vector<std::size_t> send_counts(static_cast<std::size_t>(size_), send_count);
  const std::vector<std::size_t> send_displs(static_cast<std::size_t>(size_), 0);
  exchange(send, send_counts, send_displs, recv, recv_counts, displacements(recv_counts), type.row_bytes);
  complete(request);
}

void NcclCommunicator::do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                                    std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  EMBSCALE_EXPECTS(send_counts.size() == static_cast<std::size_t>(size_) && recv_counts.size() == send_counts.size(),
                   "alltoallv needs one count per rank on each side");
  stats().record(CommOp::kAlltoallv, bytes_to_others(send_counts, rank_, type.row_bytes),
                 bytes_to_others(recv_counts, rank_, type.row_bytes));
  exchange(send, send_counts, displacements(send_counts), recv, recv_counts, displacements(recv_counts),
           type.row_bytes);
  complete(request);
}

void NcclCommunicator::do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  const auto ranks = static_cast<std::size_t>(size_);
  stats().record(CommOp::kAlltoall, count * (ranks - 1) * type.row_bytes, count * (ranks - 1) * type.row_bytes);
  const std::vector<std::size_t> counts(ranks, count);
  const auto displs = displacements(counts);
  exchange(send, counts, displs, recv, counts, displs, type.row_bytes);
  complete(request);
}

void NcclCommunicator::do_sendrecv(const void* send, std::size_t send_count, int dest, int /*send_tag*/, void* recv,
                                   std::size_t recv_count, int source, int /*recv_tag*/, RowType type,
                                   Request* request) {
  stats().record(CommOp::kSendrecv, dest == rank_ ? 0 : send_count * type.row_bytes,
                 source == rank_ ? 0 : recv_count * type.row_bytes);
  const auto& f = library_.functions();
  if (dest == rank_ && source == rank_) {
    EMBSCALE_EXPECTS(send_count == recv_count, "sendrecv to itself: the counts differ");
    if (send_count > 0 && send != recv)
      check(f.copy_async(recv, send, static_cast<std::int64_t>(send_count * type.row_bytes), stream_),
            "sendrecv self copy");
    complete(request);
    return;
  }
  // NCCL matches a send to itself only with the receive from itself in the same group.
  EMBSCALE_EXPECTS(dest != rank_ && source != rank_,
                   "sendrecv: NCCL cannot send to itself without receiving from itself in the same call");
  Group group(library_);
  if (send_count > 0)
    check(f.nccl_send(send, send_count * type.row_bytes, EMBSCALE_NCCL_UINT8, dest, comm_, stream_), "ncclSend");
  if (recv_count > 0)
    check(f.nccl_recv(recv, recv_count * type.row_bytes, EMBSCALE_NCCL_UINT8, source, comm_, stream_), "ncclRecv");
  group.end();
  complete(request);
}

void NcclCommunicator::do_send(const void* data, std::size_t count, RowType type, int dest, int /*tag*/,
                               Request* request) {
  stats().record(CommOp::kSend, count * type.row_bytes, 0);
  EMBSCALE_EXPECTS(dest != rank_, "send: NCCL cannot send to itself alone (use sendrecv or alltoallv)");
  if (count > 0)
    check(library_.functions().nccl_send(data, count * type.row_bytes, EMBSCALE_NCCL_UINT8, dest, comm_, stream_),
          "ncclSend");
  complete(request);
}

void NcclCommunicator::do_recv(void* data, std::size_t count, RowType type, int source, int /*tag*/, Request* request) {
  stats().record(CommOp::kRecv, 0, count * type.row_bytes);
  EMBSCALE_EXPECTS(source != rank_, "recv: NCCL cannot receive from itself alone (use sendrecv or alltoallv)");
  if (count > 0)
    check(library_.functions().nccl_recv(data, count * type.row_bytes, EMBSCALE_NCCL_UINT8, source, comm_, stream_),
          "ncclRecv");
  complete(request);
}

}  // namespace embscale::comm
