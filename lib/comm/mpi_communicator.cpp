#include "comm/mpi_communicator.hpp"

#include <algorithm>
#include <cstring>
#include <string>

#include "comm/mpi_types.hpp"
#include "core/error.hpp"

namespace embscale::comm {

using detail::bytes;
using detail::bytes_to_others;
using detail::CallRecord;
using detail::for_pieces;
using detail::MpiPending;

namespace {

// Fills int counts (and displacements, when `out_displs` is given) of counts[r] * scale when every
// count and displacement fits `limit`; returns false otherwise (the caller then takes the
// large-count schedule).
bool int_layout(std::span<const std::size_t> counts, std::size_t scale, std::size_t limit, std::vector<int>& out_counts,
                std::vector<int>* out_displs) {
  out_counts.resize(counts.size());
  if (out_displs) out_displs->resize(counts.size());
  std::size_t displ = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const std::size_t n = counts[r] * scale;
    if (n > limit || displ > limit) return false;
    out_counts[r] = static_cast<int>(n);
    if (out_displs) (*out_displs)[r] = static_cast<int>(displ);
    displ += n;
  }
  return true;
}

// What a reduction hands to MPI: scalars, since MPI's predefined operations are defined on
// predefined types only (a row of several values is reduced as that many scalars).
struct Scalars {
  std::size_t values;
  std::size_t bytes;  // of one scalar
  MPI_Datatype type;
  MPI_Op op;
};
// Inline and without a division on the one-value rows every reduction of a scheme passes (a
// 64-bit division alone costs about as much as the rest of the bookkeeping).
inline Scalars scalars_of(std::size_t rows, RowType type, ReduceOp op, const char* operation) {
  if (type.type == DataType::kBytes) [[unlikely]]
    throw Error(std::string(operation) + " needs an arithmetic type, not bytes");
  const bool one = type.row_values == 1;
  return {one ? rows : rows * type.row_values, one ? type.row_bytes : type.row_bytes / type.row_values,
          detail::scalar_datatype(type.type), detail::reduce_op(op, type.type)};
}

}  // namespace

void throw_mpi_error(int rc, const char* call) {
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
  alltoallv_pair_limit_ = std::max<std::size_t>(1, max_message_rows_ / static_cast<std::size_t>(size_));
  check_mpi(MPI_Comm_dup(comm_, &chunk_comm_), "MPI_Comm_dup");
  check_mpi(MPI_Comm_dup(comm_, &large_p2p_comm_), "MPI_Comm_dup");
}

MpiCommunicator::~MpiCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  row_types_.clear();
  owned_row_types_.clear();
  MPI_Comm_free(&chunk_comm_);
  MPI_Comm_free(&large_p2p_comm_);
  if (owned_) MPI_Comm_free(&comm_);
}

MPI_Datatype MpiCommunicator::row_datatype(RowType type) {
  if (type.type == DataType::kBytes ? type.row_bytes == 1 : type.row_values == 1)
    return detail::scalar_datatype(type.type);
  for (const auto& [cached, datatype] : row_types_)
    if (cached.type == type.type && cached.row_values == type.row_values && cached.row_bytes == type.row_bytes)
      return datatype;
  owned_row_types_.push_back(std::make_unique<detail::RowDatatype>(type));
  row_types_.emplace_back(type, owned_row_types_.back()->get());
  return row_types_.back().second;
}

void MpiCommunicator::set_max_message_rows(std::size_t rows) {
  EMBSCALE_EXPECTS(rows >= 1 && rows <= kIntLimit, "max_message_rows must lie in [1, INT_MAX]");
  max_message_rows_ = rows;
  alltoallv_pair_limit_ = std::max<std::size_t>(1, rows / static_cast<std::size_t>(size_));
}

std::unique_ptr<MpiCommunicator> MpiCommunicator::duplicate(MPI_Comm comm) {
  MPI_Comm out;
  check_mpi(MPI_Comm_dup(comm, &out), "MPI_Comm_dup");
  return std::unique_ptr<MpiCommunicator>(new MpiCommunicator(out, true));
}

std::unique_ptr<Communicator> MpiCommunicator::split(int color, int key) const {
  MPI_Comm out;
  check_mpi(MPI_Comm_split(comm_, color, key, &out), "MPI_Comm_split");
  return std::unique_ptr<Communicator>(new MpiCommunicator(out, true));
}

std::unique_ptr<Communicator> MpiCommunicator::split_by_host() const {
  MPI_Comm out;
  check_mpi(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &out), "MPI_Comm_split_type");
  return std::unique_ptr<Communicator>(new MpiCommunicator(out, true));
}

void MpiCommunicator::barrier() {
  stats().record(CommOp::kBarrier, 0, 0);
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

// Every rank passes the same count to the collectives below, so all take the same branch and cut
// the same pieces.

void MpiCommunicator::do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) {
  const std::uint64_t payload = count * type.row_bytes;
  stats().record(CommOp::kBcast, rank_ == root ? payload * static_cast<std::uint64_t>(size_ - 1) : 0,
                 rank_ == root ? 0 : payload);
  const MPI_Datatype dt = row_datatype(type);
  if (!request) {
    for_pieces(count, max_message_rows_, [&](std::size_t first, int n) {
      check_mpi(MPI_Bcast(bytes(data) + first * type.row_bytes, n, dt, root, comm_), "MPI_Bcast");
    });
    return;
  }
  CallRecord record(request);
  for_pieces(count, max_message_rows_, [&](std::size_t first, int n) {
    MPI_Request req;
    check_mpi(MPI_Ibcast(bytes(data) + first * type.row_bytes, n, dt, root, comm_, &req), "MPI_Ibcast");
    record.post(req);
  });
  record.finish();
}

void MpiCommunicator::do_allreduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                                   Request* request) {
  const Scalars scalars = scalars_of(count, type, op, "allreduce");
  // Named, not bound: the lambdas use them (clang 14, the fuzz tree's, cannot capture a binding).
  const std::size_t values = scalars.values, sb = scalars.bytes;
  const MPI_Datatype dt = scalars.type;
  const MPI_Op mpi_op = scalars.op;
  stats().record(CommOp::kAllreduce, values * sb, values * sb);
  const auto in_piece = [&](std::size_t first) -> const void* {
    return send == recv ? MPI_IN_PLACE : bytes(send) + first * sb;
  };
  if (!request) {
    for_pieces(values, max_message_rows_, [&](std::size_t first, int n) {
      check_mpi(MPI_Allreduce(in_piece(first), bytes(recv) + first * sb, n, dt, mpi_op, comm_), "MPI_Allreduce");
    });
    detail::average_step(op, nullptr, recv, values, type.type, size_);
    return;
  }
  CallRecord record(request);
  for_pieces(values, max_message_rows_, [&](std::size_t first, int n) {
    MPI_Request req;
    check_mpi(MPI_Iallreduce(in_piece(first), bytes(recv) + first * sb, n, dt, mpi_op, comm_, &req), "MPI_Iallreduce");
    record.post(req);
  });
  detail::average_step(op, &record.get(), recv, values, type.type, size_);
  record.finish();
}

void MpiCommunicator::do_reduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op, int root,
                                Request* request) {
  EMBSCALE_EXPECTS(root >= 0 && root < size_, "reduce: root out of range");
  const Scalars scalars = scalars_of(count, type, op, "reduce");
  const std::size_t values = scalars.values, sb = scalars.bytes;
  const MPI_Datatype dt = scalars.type;
  const MPI_Op mpi_op = scalars.op;
  const bool is_root = rank_ == root;
  // The payload goes to the root: counted as sent elsewhere, as received on the root.
  stats().record(CommOp::kReduce, is_root ? 0 : values * sb, is_root ? values * sb : 0);
  // MPI_IN_PLACE is the root's alone; recv means nothing elsewhere (and may be empty there).
  const auto in_piece = [&](std::size_t first) -> const void* {
    return is_root && send == recv ? MPI_IN_PLACE : bytes(send) + first * sb;
  };
  const auto out_piece = [&](std::size_t first) -> void* { return is_root ? bytes(recv) + first * sb : nullptr; };
  if (!request) {
    for_pieces(values, max_message_rows_, [&](std::size_t first, int n) {
      check_mpi(MPI_Reduce(in_piece(first), out_piece(first), n, dt, mpi_op, root, comm_), "MPI_Reduce");
    });
    detail::average_step(op, nullptr, is_root ? recv : nullptr, values, type.type, size_);
    return;
  }
  CallRecord record(request);
  for_pieces(values, max_message_rows_, [&](std::size_t first, int n) {
    MPI_Request req;
    check_mpi(MPI_Ireduce(in_piece(first), out_piece(first), n, dt, mpi_op, root, comm_, &req), "MPI_Ireduce");
    record.post(req);
  });
  detail::average_step(op, &record.get(), is_root ? recv : nullptr, values, type.type, size_);
  record.finish();
}

void MpiCommunicator::do_reduce_scatter_block(const void* send, void* recv, std::size_t count, RowType type,
                                              ReduceOp op, Request* request) {
  const Scalars scalars = scalars_of(count, type, op, "reduce_scatter_block");
  const std::size_t values = scalars.values, sb = scalars.bytes;
  const MPI_Datatype dt = scalars.type;
  const MPI_Op mpi_op = scalars.op;
  stats().record(CommOp::kReduceScatterBlock, values * sb * static_cast<std::size_t>(size_), values * sb);
  const bool in_place = send == recv;
  if (values <= max_message_rows_) {
    const void* in = in_place ? MPI_IN_PLACE : send;
    const int n = static_cast<int>(values);
    if (!request) {
      check_mpi(MPI_Reduce_scatter_block(in, recv, n, dt, mpi_op, comm_), "MPI_Reduce_scatter_block");
      detail::average_step(op, nullptr, recv, values, type.type, size_);
      return;
    }
    CallRecord record(request);
    MPI_Request req;
    check_mpi(MPI_Ireduce_scatter_block(in, recv, n, dt, mpi_op, comm_, &req), "MPI_Ireduce_scatter_block");
    record.post(req);
    detail::average_step(op, &record.get(), recv, values, type.type, size_);
    record.finish();
    return;
  }
  // Large counts: segment r is contiguous, so reduce it to rank r piece by piece. In place, the
  // own segment is reduced where it lies (other ranks' reductions still read segment 0, so the
  // result cannot go there before all complete) and moved to the front on completion.
  CallRecord record(request);
  const std::byte* segments = in_place ? bytes(recv) : bytes(send);
  for (int root = 0; root < size_; ++root) {
    const std::byte* segment = segments + static_cast<std::size_t>(root) * values * sb;
    for_pieces(values, max_message_rows_, [&](std::size_t first, int n) {
      const bool mine = root == rank_;
      const void* in = mine && in_place ? MPI_IN_PLACE : segment + first * sb;
      void* out = !mine ? nullptr : in_place ? const_cast<std::byte*>(segment) + first * sb : bytes(recv) + first * sb;
      MPI_Request req;
      check_mpi(MPI_Ireduce(in, out, n, dt, mpi_op, root, chunk_comm_, &req), "MPI_Ireduce");
      record.post(req);
    });
  }
  const std::size_t own_offset = in_place ? static_cast<std::size_t>(rank_) * values * sb : 0;
  const DataType t = type.type;
  const int ranks = size_;
  record.get().on_complete = [=] {
    if (own_offset != 0) std::memmove(recv, bytes(recv) + own_offset, values * sb);
    detail::average_step(op, nullptr, recv, values, t, ranks);
  };
  record.finish();
}

void MpiCommunicator::do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                                        RowType type, ReduceOp op, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "reduce_scatter needs one count per rank");
  const Scalars scalars = scalars_of(recv_counts[static_cast<std::size_t>(rank_)], type, op, "reduce_scatter");
  const std::size_t own_values = scalars.values, sb = scalars.bytes;
  const MPI_Datatype dt = scalars.type;
  const MPI_Op mpi_op = scalars.op;
  std::size_t total_values = 0;
  for (const std::size_t c : recv_counts) total_values += c * type.row_values;
  stats().record(CommOp::kReduceScatter, total_values * sb, own_values * sb);
  if (!request && total_values <= max_message_rows_ &&
      int_layout(recv_counts, type.row_values, max_message_rows_, layout_.counts_a, nullptr)) {
    check_mpi(MPI_Reduce_scatter(send, recv, layout_.counts_a.data(), dt, mpi_op, comm_), "MPI_Reduce_scatter");
    detail::average_step(op, nullptr, recv, own_values, type.type, size_);
    return;
  }
  CallRecord record(request);
  MpiPending& pending = record.get();
  if (total_values <= max_message_rows_ &&
      int_layout(recv_counts, type.row_values, max_message_rows_, pending.layout.counts_a, nullptr)) {
    MPI_Request req;
    check_mpi(MPI_Ireduce_scatter(send, recv, pending.layout.counts_a.data(), dt, mpi_op, comm_, &req),
              "MPI_Ireduce_scatter");
    record.post(req);
  } else {
    // Large counts: segment r is contiguous in `send`, so reduce it to rank r piece by piece.
    std::size_t offset = 0;
    for (int root = 0; root < size_; ++root) {
      const std::size_t n = recv_counts[static_cast<std::size_t>(root)] * type.row_values;
      for_pieces(n, max_message_rows_, [&](std::size_t first, int piece) {
        void* out = root == rank_ ? bytes(recv) + first * sb : nullptr;
        MPI_Request req;
        check_mpi(MPI_Ireduce(bytes(send) + (offset + first) * sb, out, piece, dt, mpi_op, root, chunk_comm_, &req),
                  "MPI_Ireduce");
        record.post(req);
      });
      offset += n;
    }
  }
  detail::average_step(op, &pending, recv, own_values, type.type, size_);
  record.finish();
}

void MpiCommunicator::do_gatherv(const void* send, std::size_t send_count, void* recv,
                                 std::span<const std::size_t> recv_counts, RowType type, int root, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "gatherv needs one count per rank");
  EMBSCALE_EXPECTS(recv_counts[static_cast<std::size_t>(rank_)] == send_count,
                   "gatherv: own count differs from recv_counts");
  stats().record(CommOp::kGatherv, rank_ == root ? 0 : send_count * type.row_bytes,
                 rank_ == root ? bytes_to_others(recv_counts, rank_, type.row_bytes) : 0);
  const MPI_Datatype dt = row_datatype(type);
  const int n = static_cast<int>(send_count);
  if (!request && int_layout(recv_counts, 1, max_message_rows_, layout_.counts_a, &layout_.displs_a)) {
    check_mpi(MPI_Gatherv(send, n, dt, recv, layout_.counts_a.data(), layout_.displs_a.data(), dt, root, comm_),
              "MPI_Gatherv");
    return;
  }
  CallRecord record(request);
  detail::IntLayout& layout = record.get().layout;
  if (int_layout(recv_counts, 1, max_message_rows_, layout.counts_a, &layout.displs_a)) {
    MPI_Request req;
    check_mpi(MPI_Igatherv(send, n, dt, recv, layout.counts_a.data(), layout.displs_a.data(), dt, root, comm_, &req),
              "MPI_Igatherv");
    record.post(req);
  } else if (rank_ == root) {
    std::size_t offset = 0;
    for (int r = 0; r < size_; ++r) {
      const auto ur = static_cast<std::size_t>(r);
      if (r == root) std::memcpy(bytes(recv) + offset * type.row_bytes, send, send_count * type.row_bytes);
      else
        detail::post_chunked(record.get(), false, bytes(recv) + offset * type.row_bytes, recv_counts[ur],
                             type.row_bytes, dt, r, chunk_comm_, max_message_rows_);
      offset += recv_counts[ur];
    }
  } else {
    detail::post_chunked(record.get(), true, const_cast<void*>(send), send_count, type.row_bytes, dt, root, chunk_comm_,
                         max_message_rows_);
  }
  record.finish();
}

void MpiCommunicator::do_allgatherv(const void* send, std::size_t send_count, void* recv,
                                    std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  EMBSCALE_EXPECTS(recv_counts.size() == static_cast<std::size_t>(size_), "allgatherv needs one count per rank");
  EMBSCALE_EXPECTS(recv_counts[static_cast<std::size_t>(rank_)] == send_count,
                   "allgatherv: own count differs from recv_counts");
  stats().record(CommOp::kAllgatherv, send_count * type.row_bytes * static_cast<std::size_t>(size_ - 1),
                 bytes_to_others(recv_counts, rank_, type.row_bytes));
  const MPI_Datatype dt = row_datatype(type);
  const int n = static_cast<int>(send_count);
  if (!request && int_layout(recv_counts, 1, max_message_rows_, layout_.counts_a, &layout_.displs_a)) {
    check_mpi(MPI_Allgatherv(send, n, dt, recv, layout_.counts_a.data(), layout_.displs_a.data(), dt, comm_),
              "MPI_Allgatherv");
    return;
  }
  if (request && int_layout(recv_counts, 1, max_message_rows_, layout_.counts_a, &layout_.displs_a)) {
    CallRecord record(request);
    detail::IntLayout& layout = record.get().layout;
    layout.counts_a = layout_.counts_a;
    layout.displs_a = layout_.displs_a;
    MPI_Request req;
    check_mpi(MPI_Iallgatherv(send, n, dt, recv, layout.counts_a.data(), layout.displs_a.data(), dt, comm_, &req),
              "MPI_Iallgatherv");
    record.post(req);
    record.finish();
    return;
  }
  allgatherv_chunked(send, send_count, recv, recv_counts, type, dt, request);
}

void MpiCommunicator::allgatherv_chunked(const void* send, std::size_t send_count, void* recv,
                                         std::span<const std::size_t> recv_counts, RowType type, MPI_Datatype dt,
                                         Request* request) {
  CallRecord record(request);
  std::size_t offset = 0;
  for (int r = 0; r < size_; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    std::byte* segment = bytes(recv) + offset * type.row_bytes;
    offset += recv_counts[ur];
    if (r == rank_) {
      if (segment != send) std::memcpy(segment, send, send_count * type.row_bytes);  // else in place
      continue;
    }
    detail::post_chunked(record.get(), false, segment, recv_counts[ur], type.row_bytes, dt, r, chunk_comm_,
                         max_message_rows_);
    detail::post_chunked(record.get(), true, const_cast<void*>(send), send_count, type.row_bytes, dt, r, chunk_comm_,
                         max_message_rows_);
  }
  record.finish();
}

void MpiCommunicator::do_allgather(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  const std::uint64_t payload = count * type.row_bytes * static_cast<std::uint64_t>(size_ - 1);
  stats().record(CommOp::kAllgather, payload, payload);
  const MPI_Datatype dt = row_datatype(type);
  const bool in_place = send == bytes(recv) + static_cast<std::size_t>(rank_) * count * type.row_bytes;
  const void* in = in_place ? MPI_IN_PLACE : send;
  const int n = static_cast<int>(count);
  if (count <= max_message_rows_) {
    if (!request) {
      check_mpi(MPI_Allgather(in, n, dt, recv, n, dt, comm_), "MPI_Allgather");
      return;
    }
    CallRecord record(request);
    MPI_Request req;
    check_mpi(MPI_Iallgather(in, n, dt, recv, n, dt, comm_, &req), "MPI_Iallgather");
    record.post(req);
    record.finish();
    return;
  }
  const std::vector<std::size_t> counts(static_cast<std::size_t>(size_), count);
  allgatherv_chunked(send, count, recv, counts, type, dt, request);
}

void MpiCommunicator::do_sendrecv(const void* send, std::size_t send_count, int dest, int send_tag, void* recv,
                                  std::size_t recv_count, int source, int recv_tag, RowType type, Request* request) {
  stats().record(CommOp::kSendrecv, dest == rank_ ? 0 : send_count * type.row_bytes,
                 source == rank_ ? 0 : recv_count * type.row_bytes);
  const MPI_Datatype dt = row_datatype(type);
  const bool send_fits = send_count <= max_message_rows_;
  const bool recv_fits = recv_count <= max_message_rows_;
  if (!request && send_fits && recv_fits) {
    check_mpi(MPI_Sendrecv(send, static_cast<int>(send_count), dt, dest, send_tag, recv, static_cast<int>(recv_count),
                           dt, source, recv_tag, comm_, MPI_STATUS_IGNORE),
              "MPI_Sendrecv");
    return;
  }
  // Each direction on its own: within the limit as one message on the user's communicator,
  // beyond it in pieces on large_p2p_comm_ (as send and recv do, so a sendrecv matches those too).
  CallRecord record(request);
  if (recv_fits) {
    MPI_Request req;
    check_mpi(MPI_Irecv(recv, static_cast<int>(recv_count), dt, source, recv_tag, comm_, &req), "MPI_Irecv");
    record.post(req);
  } else {
    EMBSCALE_EXPECTS(source != MPI_ANY_SOURCE && recv_tag != MPI_ANY_TAG,
                     "a receive beyond max_message_rows needs an explicit source and tag");
    detail::post_chunked(record.get(), false, recv, recv_count, type.row_bytes, dt, source, large_p2p_comm_,
                         max_message_rows_, recv_tag);
  }
  if (send_fits) {
    MPI_Request req;
    check_mpi(MPI_Isend(send, static_cast<int>(send_count), dt, dest, send_tag, comm_, &req), "MPI_Isend");
    record.post(req);
  } else {
    detail::post_chunked(record.get(), true, const_cast<void*>(send), send_count, type.row_bytes, dt, dest,
                         large_p2p_comm_, max_message_rows_, send_tag);
  }
  record.finish();
}

void MpiCommunicator::do_send(const void* data, std::size_t count, RowType type, int dest, int tag, Request* request) {
  stats().record(CommOp::kSend, count * type.row_bytes, 0);
  const MPI_Datatype dt = row_datatype(type);
  const int n = static_cast<int>(count);
  if (!request && count <= max_message_rows_) {
    check_mpi(MPI_Send(data, n, dt, dest, tag, comm_), "MPI_Send");
    return;
  }
  CallRecord record(request);
  if (count <= max_message_rows_) {
    MPI_Request req;
    check_mpi(MPI_Isend(data, n, dt, dest, tag, comm_, &req), "MPI_Isend");
    record.post(req);
  } else {
    // Large messages go in pieces with the user's tag on a communicator of their own (MPI keeps
    // their order per source and tag); the receiver posts the same count and cuts the same pieces.
    detail::post_chunked(record.get(), true, const_cast<void*>(data), count, type.row_bytes, dt, dest, large_p2p_comm_,
                         max_message_rows_, tag);
  }
  record.finish();
}

void MpiCommunicator::do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) {
  stats().record(CommOp::kRecv, 0, count * type.row_bytes);
  const MPI_Datatype dt = row_datatype(type);
  const int n = static_cast<int>(count);
  if (!request && count <= max_message_rows_) {
    check_mpi(MPI_Recv(data, n, dt, source, tag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
    return;
  }
  CallRecord record(request);
  if (count <= max_message_rows_) {
    MPI_Request req;
    check_mpi(MPI_Irecv(data, n, dt, source, tag, comm_, &req), "MPI_Irecv");
    record.post(req);
  } else {
    EMBSCALE_EXPECTS(source != MPI_ANY_SOURCE && tag != MPI_ANY_TAG,
                     "a receive beyond max_message_rows needs an explicit source and tag");
    detail::post_chunked(record.get(), false, data, count, type.row_bytes, dt, source, large_p2p_comm_,
                         max_message_rows_, tag);
  }
  record.finish();
}

std::optional<MessageInfo> MpiCommunicator::probe_message(int source, int tag, RowType type, bool blocking) {
  const int mpi_source = source == kAnySource ? MPI_ANY_SOURCE : source;
  const int mpi_tag = tag == kAnyTag ? MPI_ANY_TAG : tag;
  MPI_Status status;
  if (blocking) {
    check_mpi(MPI_Probe(mpi_source, mpi_tag, comm_, &status), "MPI_Probe");
  } else {
    int found = 0;
    check_mpi(MPI_Iprobe(mpi_source, mpi_tag, comm_, &found, &status), "MPI_Iprobe");
    if (!found) return std::nullopt;
  }
  int bytes = 0;
  check_mpi(MPI_Get_count(&status, MPI_BYTE, &bytes), "MPI_Get_count");
  const auto size = static_cast<std::size_t>(bytes);
  if (size % type.row_bytes != 0)
    throw Error("probe: the message from rank " + std::to_string(status.MPI_SOURCE) + " (tag " +
                std::to_string(status.MPI_TAG) + ") holds " + std::to_string(size) +
                " bytes, not a whole number of rows of " + std::to_string(type.row_bytes) + " bytes");
  return MessageInfo{status.MPI_SOURCE, status.MPI_TAG, size / type.row_bytes};
}

MessageInfo MpiCommunicator::receive_any(void* data, std::size_t capacity, RowType type, int source, int tag) {
  // Probe, then receive that message by its source and tag: MPI keeps the order of one source's
  // messages of one tag, so the receive takes the probed message (one thread receives per
  // communicator), and a message too large is refused while it is still waiting.
  const MessageInfo info = *probe_message(source, tag, type, true);
  if (info.rows > capacity)
    throw Error("recv_any: the message from rank " + std::to_string(info.source) + " (tag " + std::to_string(info.tag) +
                ") holds " + std::to_string(info.rows) + " rows, the buffer room for " + std::to_string(capacity));
  do_recv(data, info.rows, type, info.source, info.tag, nullptr);
  return info;
}

}  // namespace embscale::comm
