#include "comm/mpi_communicator.hpp"

#include <algorithm>
#include <cstring>
#include <numeric>
#include <string>

#include "comm/mpi_types.hpp"
#include "core/error.hpp"

namespace embscale::comm {

using detail::MpiPending;

namespace {

// Tag of the internal point-to-point messages of the collective schedules. They travel on a
// duplicate of the user's communicator (chunk_comm_), so they never match a user's send/recv;
// pieces of one transfer keep their order because MPI never reorders messages between the same
// pair on the same communicator and tag.
constexpr int kChunkTag = 7001;

// Fills int counts and displacements (in rows) when every count and displacement fits `limit`;
// returns false otherwise (the caller then takes the large-count schedule).
bool int_layout(std::span<const std::size_t> counts, std::size_t limit, std::vector<int>& out_counts,
                std::vector<int>& out_displs) {
  out_counts.resize(counts.size());
  out_displs.resize(counts.size());
  std::size_t displ = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    if (counts[r] > limit || displ > limit) return false;
    out_counts[r] = static_cast<int>(counts[r]);
    out_displs[r] = static_cast<int>(displ);
    displ += counts[r];
  }
  return true;
}

std::vector<std::size_t> row_offsets(std::span<const std::size_t> counts) {
  std::vector<std::size_t> offsets(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
  return offsets;
}

std::uint64_t bytes_to_others(std::span<const std::size_t> counts, int self, std::size_t row_bytes) {
  std::uint64_t rows = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
    if (static_cast<int>(r) != self) rows += counts[r];
  return rows * row_bytes;
}

// Posts `rows` rows as messages of at most `limit` rows each. Sender and receiver cut the same
// pieces because they pass the same row count.
void post_chunked(MpiPending& p, bool is_send, void* base, std::size_t rows, std::size_t row_bytes,
                  MPI_Datatype type, int peer, MPI_Comm comm, std::size_t limit, int tag = kChunkTag) {
  auto* bytes = static_cast<std::byte*>(base);
  for (std::size_t first = 0; first < rows; first += limit) {
    const int n = static_cast<int>(std::min(limit, rows - first));
    MPI_Request req;
    if (is_send)
      check_mpi(MPI_Isend(bytes + first * row_bytes, n, type, peer, tag, comm, &req), "MPI_Isend");
    else
      check_mpi(MPI_Irecv(bytes + first * row_bytes, n, type, peer, tag, comm, &req), "MPI_Irecv");
    p.requests.push_back(req);
  }
}

// Completes an operation: now when blocking, else hands it to the caller's Request.
void finish(std::unique_ptr<MpiPending> pending, Request* request) {
  if (request)
    *request = Request(std::move(pending));
  else
    pending->wait();
}

// Runs `post(request_slot_or_null)`: the blocking MPI call when request is null, the non-blocking
// one otherwise (its MPI_Request goes into the pending record).
template <class Blocking, class NonBlocking>
void call(std::unique_ptr<MpiPending> pending, Request* request, Blocking blocking, NonBlocking nonblocking) {
  if (!request) {
    blocking(*pending);
    return;
  }
  MPI_Request req;
  nonblocking(*pending, &req);
  pending->requests.push_back(req);
  *request = Request(std::move(pending));
}

}  // namespace

void check_mpi(int rc, const char* call) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  throw Error(std::string(call) + " failed: " + std::string(text, static_cast<std::size_t>(len)));
}

MpiCommunicator::MpiCommunicator(MPI_Comm comm) : MpiCommunicator(comm, false) {}

MpiCommunicator::MpiCommunicator(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {
  // Errors come back as return codes (checked by check_mpi) instead of aborting inside MPI.
  MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  check_mpi(MPI_Comm_dup(comm_, &chunk_comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(comm_, &large_p2p_comm_), "MPI_Comm_dup");
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  row_types_.clear();
  MPI_Comm_free(&chunk_comm_);
  MPI_Comm_free(&large_p2p_comm_);
  if (owned_) MPI_Comm_free(&comm_);
}

MPI_Datatype MpiCommunicator::row_datatype(RowType type) {
  for (const auto& [cached, datatype] : row_types_)
    if (cached.type == type.type && cached.row_values == type.row_values && cached.row_bytes == type.row_bytes)
      return datatype->get();
  row_types_.emplace_back(type, std::make_unique<detail::RowDatatype>(type));
  return row_types_.back().second->get();
}

void MpiCommunicator::set_max_message_rows(std::size_t rows) {
  EMBSCALE_EXPECTS(rows >= 1 && rows <= kIntLimit, "max_message_rows must lie in [1, INT_MAX]");
  max_message_rows_ = rows;
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) const {
  MPI_Comm out;
  check_mpi(MPI_Comm_split(comm_, color, key, &out), "MPI_Comm_split");
  return std::unique_ptr<Communicator>(new MpiCommunicator(out, true));
}

std::unique_ptr<Communicator> MpiCommunicator::split_by_host() const {
  MPI_Comm out;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &out),
            "MPI_Comm_split_type");
  return std::unique_ptr<Communicator>(new MpiCommunicator(out, true));
}

void MpiCommunicator::barrier() {
  stats().record("barrier", 0, 0);
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

void MpiCommunicator::do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) {
  const std::uint64_t bytes = count * type.row_bytes;
  stats().record("bcast", rank_ == root ? bytes * static_cast<std::uint64_t>(size_ - 1) : 0,
                 rank_ == root ? 0 : bytes);
  const MPI_Datatype dt = row_datatype(type);
  auto pending = std::make_unique<MpiPending>();
  auto* bytes_ptr = static_cast<std::byte*>(data);
  // Every rank passes the same count, so all take the same branch and cut the same pieces.
  for (std::size_t first = 0; first < count || first == 0; first += max_message_rows_) {
    const int n = static_cast<int>(std::min(max_message_rows_, count - first));
    void* piece = bytes_ptr + first * type.row_bytes;
    if (!request) {
      check_mpi(MPI_Bcast(piece, n, dt, root, comm_), "MPI_Bcast");
    } else {
      MPI_Request req;
      check_mpi(MPI_Ibcast(piece, n, dt, root, comm_, &req), "MPI_Ibcast");
      pending->requests.push_back(req);
    }
    if (count == 0) break;
  }
  if (request) *request = Request(std::move(pending));
}

void MpiCommunicator::do_allreduce(const void* send, void* recv, std::size_t count, RowType type,
                                   ReduceOp op, Request* request) {
  EMBSCALE_EXPECTS(type.type != DataType::kBytes, "allreduce needs an arithmetic type");
  const std::size_t values = count * type.row_values;
  const std::size_t scalar_bytes = type.row_bytes / type.row_values;
  stats().record("allreduce", values * scalar_bytes, values * scalar_bytes);
  const MPI_Datatype dt = detail::scalar_datatype(type.type);
  auto pending = std::make_unique<MpiPending>();
  const auto* in = static_cast<const std::byte*>(send);
  auto* out = static_cast<std::byte*>(recv);
  for (std::size_t first = 0; first < values || first == 0; first += max_message_rows_) {
    const int n = static_cast<int>(std::min(max_message_rows_, values - first));
    const void* in_piece = send == recv ? MPI_IN_PLACE : in + first * scalar_bytes;
    void* out_piece = out + first * scalar_bytes;
    if (!request) {
      check_mpi(MPI_Allreduce(in_piece, out_piece, n, dt, detail::reduce_op(op), comm_), "MPI_Allreduce");
    } else {
      MPI_Request req;
      check_mpi(MPI_Iallreduce(in_piece, out_piece, n, dt, detail::reduce_op(op), comm_, &req),
                "MPI_Iallreduce");
      pending->requests.push_back(req);
    }
    if (values == 0) break;
  }
  if (request) *request = Request(std::move(pending));
}

void MpiCommunicator::do_reduce_scatter(const void* send, void* recv,
                                        std::span<const std::size_t> recv_counts, RowType type,
                                        ReduceOp op, Request* request) {
  EMBSCALE_EXPECTS(type.type != DataType::kBytes, "reduce_scatter needs an arithmetic type");
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "reduce_scatter needs one count per rank");
  const std::size_t scalar_bytes = type.row_bytes / type.row_values;
  // Reductions run on scalars: predefined MPI ops are defined on predefined types.
  std::vector<std::size_t> values(recv_counts.size());
  for (std::size_t r = 0; r < values.size(); ++r) values[r] = recv_counts[r] * type.row_values;
  const auto offsets = row_offsets(values);
  stats().record("reduce_scatter", offsets.back() * scalar_bytes, values[static_cast<std::size_t>(rank_)] * scalar_bytes);
  const MPI_Datatype dt = detail::scalar_datatype(type.type);
  const MPI_Op mpi_op = detail::reduce_op(op);
  auto pending = std::make_unique<MpiPending>();
  std::vector<int> unused_displs;
  if (offsets.back() <= max_message_rows_ && int_layout(values, max_message_rows_, pending->counts_a, unused_displs)) {
    call(std::move(pending), request,
         [&](MpiPending& p) { check_mpi(MPI_Reduce_scatter(send, recv, p.counts_a.data(), dt, mpi_op, comm_), "MPI_Reduce_scatter"); },
         [&](MpiPending& p, MPI_Request* req) { check_mpi(MPI_Ireduce_scatter(send, recv, p.counts_a.data(), dt, mpi_op, comm_, req), "MPI_Ireduce_scatter"); });
    return;
  }
  // Large counts: segment r is contiguous in `send`, so reduce it to rank r piece by piece.
  const auto* in = static_cast<const std::byte*>(send);
  for (int root = 0; root < size_; ++root) {
    const std::size_t n = values[static_cast<std::size_t>(root)];
    for (std::size_t first = 0; first < n; first += max_message_rows_) {
      const int piece = static_cast<int>(std::min(max_message_rows_, n - first));
      const void* in_piece = in + (offsets[static_cast<std::size_t>(root)] + first) * scalar_bytes;
      void* out_piece = root == rank_ ? static_cast<std::byte*>(recv) + first * scalar_bytes : nullptr;
      MPI_Request req;
      check_mpi(MPI_Ireduce(in_piece, out_piece, piece, dt, mpi_op, root, chunk_comm_, &req), "MPI_Ireduce");
      pending->requests.push_back(req);
    }
  }
  finish(std::move(pending), request);
}

void MpiCommunicator::do_gatherv(const void* send, std::size_t send_count, void* recv,
                                 std::span<const std::size_t> recv_counts, RowType type, int root,
                                 Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_),
                   "gatherv needs the counts of every rank on every rank (all must agree on the schedule)");
  EMBSCALE_EXPECTS(recv_counts[static_cast<std::size_t>(rank_)] == send_count, "gatherv: own count differs from recv_counts");
  stats().record("gatherv", rank_ == root ? 0 : send_count * type.row_bytes,
                 rank_ == root ? bytes_to_others(recv_counts, rank_, type.row_bytes) : 0);
  const MPI_Datatype dt = row_datatype(type);
  auto pending = std::make_unique<MpiPending>();
  if (int_layout(recv_counts, max_message_rows_, pending->counts_a, pending->displs_a)) {
    const int n = static_cast<int>(send_count);
    call(std::move(pending), request,
         [&](MpiPending& p) { check_mpi(MPI_Gatherv(send, n, dt, recv, p.counts_a.data(), p.displs_a.data(), dt, root, comm_), "MPI_Gatherv"); },
         [&](MpiPending& p, MPI_Request* req) { check_mpi(MPI_Igatherv(send, n, dt, recv, p.counts_a.data(), p.displs_a.data(), dt, root, comm_, req), "MPI_Igatherv"); });
    return;
  }
  const auto offsets = row_offsets(recv_counts);
  auto* out = static_cast<std::byte*>(recv);
  if (rank_ == root) {
    for (int r = 0; r < size_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (r == root)
        std::memcpy(out + offsets[ur] * type.row_bytes, send, send_count * type.row_bytes);
      else
        post_chunked(*pending, false, out + offsets[ur] * type.row_bytes, recv_counts[ur], type.row_bytes, dt, r, chunk_comm_, max_message_rows_);
    }
  } else {
    post_chunked(*pending, true, const_cast<void*>(send), send_count, type.row_bytes, dt, root, chunk_comm_, max_message_rows_);
  }
  finish(std::move(pending), request);
}

void MpiCommunicator::do_allgatherv(const void* send, std::size_t send_count, void* recv,
                                    std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "allgatherv needs one count per rank");
  EMBSCALE_EXPECTS(recv_counts[static_cast<std::size_t>(rank_)] == send_count, "allgatherv: own count differs from recv_counts");
  stats().record("allgatherv", send_count * type.row_bytes * static_cast<std::size_t>(size_ - 1),
                 bytes_to_others(recv_counts, rank_, type.row_bytes));
  const MPI_Datatype dt = row_datatype(type);
  auto pending = std::make_unique<MpiPending>();
  if (int_layout(recv_counts, max_message_rows_, pending->counts_a, pending->displs_a)) {
    const int n = static_cast<int>(send_count);
    call(std::move(pending), request,
         [&](MpiPending& p) { check_mpi(MPI_Allgatherv(send, n, dt, recv, p.counts_a.data(), p.displs_a.data(), dt, comm_), "MPI_Allgatherv"); },
         [&](MpiPending& p, MPI_Request* req) { check_mpi(MPI_Iallgatherv(send, n, dt, recv, p.counts_a.data(), p.displs_a.data(), dt, comm_, req), "MPI_Iallgatherv"); });
    return;
  }
  const auto offsets = row_offsets(recv_counts);
  auto* out = static_cast<std::byte*>(recv);
  std::memcpy(out + offsets[static_cast<std::size_t>(rank_)] * type.row_bytes, send, send_count * type.row_bytes);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto ur = static_cast<std::size_t>(r);
    post_chunked(*pending, false, out + offsets[ur] * type.row_bytes, recv_counts[ur], type.row_bytes, dt, r, chunk_comm_, max_message_rows_);
    post_chunked(*pending, true, const_cast<void*>(send), send_count, type.row_bytes, dt, r, chunk_comm_, max_message_rows_);
  }
  finish(std::move(pending), request);
}

void MpiCommunicator::do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                                   std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  EMBSCALE_EXPECTS(send_counts.size() == static_cast<std::size_t>(size_) && recv_counts.size() == send_counts.size(),
                   "alltoallv needs one send and one recv count per rank");
  stats().record("alltoallv", bytes_to_others(send_counts, rank_, type.row_bytes),
                 bytes_to_others(recv_counts, rank_, type.row_bytes));
  const MPI_Datatype dt = row_datatype(type);
  auto pending = std::make_unique<MpiPending>();
  const bool local_fits = int_layout(send_counts, max_message_rows_, pending->counts_a, pending->displs_a) &&
                          int_layout(recv_counts, max_message_rows_, pending->counts_b, pending->displs_b);
  // A rank sees only its own counts, yet all ranks must take the same branch. Blocking: agree
  // with one small allreduce (a blocking alltoallv synchronises anyway). Non-blocking: an
  // agreement would block, so the point-to-point schedule, which needs no agreement, always runs.
  if (!request) {
    int all_fit = local_fits ? 1 : 0;
    check_mpi(MPI_Allreduce(MPI_IN_PLACE, &all_fit, 1, MPI_INT, MPI_MIN, chunk_comm_), "MPI_Allreduce");
    if (all_fit) {
      check_mpi(MPI_Alltoallv(send, pending->counts_a.data(), pending->displs_a.data(), dt, recv,
                              pending->counts_b.data(), pending->displs_b.data(), dt, comm_),
                "MPI_Alltoallv");
      return;
    }
  }
  const auto send_offsets = row_offsets(send_counts);
  const auto recv_offsets = row_offsets(recv_counts);
  auto* out = static_cast<std::byte*>(recv);
  auto* in = static_cast<std::byte*>(const_cast<void*>(send));
  const auto self = static_cast<std::size_t>(rank_);
  EMBSCALE_EXPECTS(send_counts[self] == recv_counts[self], "alltoallv: rows to self must equal rows from self");
  std::memcpy(out + recv_offsets[self] * type.row_bytes, in + send_offsets[self] * type.row_bytes,
              send_counts[self] * type.row_bytes);
  for (int r = 0; r < size_; ++r) {
    if (r == rank_) continue;
    const auto ur = static_cast<std::size_t>(r);
    post_chunked(*pending, false, out + recv_offsets[ur] * type.row_bytes, recv_counts[ur], type.row_bytes, dt, r, chunk_comm_, max_message_rows_);
    post_chunked(*pending, true, in + send_offsets[ur] * type.row_bytes, send_counts[ur], type.row_bytes, dt, r, chunk_comm_, max_message_rows_);
  }
  finish(std::move(pending), request);
}

void MpiCommunicator::do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  // Every rank passes the same count (an MPI rule), so the choice below is the same everywhere
  // and needs no agreement, unlike alltoallv's.
  const auto ranks = static_cast<std::size_t>(size_);
  if (count * ranks > max_message_rows_) {
    const std::vector<std::size_t> counts(ranks, count);
    do_alltoallv(send, counts, recv, counts, type, request);
    return;
  }
  stats().record("alltoall", count * (ranks - 1) * type.row_bytes, count * (ranks - 1) * type.row_bytes);
  const MPI_Datatype dt = row_datatype(type);
  const int n = static_cast<int>(count);
  call(std::make_unique<MpiPending>(), request,
       [&](MpiPending&) { check_mpi(MPI_Alltoall(send, n, dt, recv, n, dt, comm_), "MPI_Alltoall"); },
       [&](MpiPending&, MPI_Request* req) { check_mpi(MPI_Ialltoall(send, n, dt, recv, n, dt, comm_, req), "MPI_Ialltoall"); });
}

void MpiCommunicator::do_send(const void* data, std::size_t count, RowType type, int dest, int tag,
                              Request* request) {
  stats().record("send", count * type.row_bytes, 0);
  const MPI_Datatype dt = row_datatype(type);
  auto pending = std::make_unique<MpiPending>();
  if (count <= max_message_rows_) {
    const int n = static_cast<int>(count);
    call(std::move(pending), request,
         [&](MpiPending&) { check_mpi(MPI_Send(data, n, dt, dest, tag, comm_), "MPI_Send"); },
         [&](MpiPending&, MPI_Request* req) { check_mpi(MPI_Isend(data, n, dt, dest, tag, comm_, req), "MPI_Isend"); });
    return;
  }
  // Large messages go in pieces with the user's tag on a communicator of their own (MPI keeps
  // their order per source and tag); the receiver posts the same count and cuts the same pieces.
  post_chunked(*pending, true, const_cast<void*>(data), count, type.row_bytes, dt, dest, large_p2p_comm_,
               max_message_rows_, tag);
  finish(std::move(pending), request);
}

void MpiCommunicator::do_recv(void* data, std::size_t count, RowType type, int source, int tag,
                              Request* request) {
  stats().record("recv", 0, count * type.row_bytes);
  const MPI_Datatype dt = row_datatype(type);
  auto pending = std::make_unique<MpiPending>();
  if (count <= max_message_rows_) {
    const int n = static_cast<int>(count);
    call(std::move(pending), request,
         [&](MpiPending&) { check_mpi(MPI_Recv(data, n, dt, source, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv"); },
         [&](MpiPending&, MPI_Request* req) { check_mpi(MPI_Irecv(data, n, dt, source, tag, comm_, req), "MPI_Irecv"); });
    return;
  }
  EMBSCALE_EXPECTS(source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG,
                   "a receive beyond max_message_rows needs an explicit source and tag");
  post_chunked(*pending, false, data, count, type.row_bytes, dt, source, large_p2p_comm_, max_message_rows_, tag);
  finish(std::move(pending), request);
}

}  // namespace embscale::comm
