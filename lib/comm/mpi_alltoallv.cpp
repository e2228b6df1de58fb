// alltoallv (and alltoall beyond the limit) without any agreement between ranks.
//
// A rank sees only its own counts, yet all ranks must make the same collective calls. The
// decision is therefore taken per pair, from the pair's count c, which both ends know (my send
// count to j is j's receive count from me) and which both compare with the same threshold
// T = max(1, max_message_rows / size):
// * c <= T: the pair travels in the one MPI_(I)Alltoallv every rank makes, with count c;
// * c > T: it goes in that collective with count 0 and travels beside it as point-to-point
//   messages of at most max_message_rows rows on chunk_comm_, posted before the collective and
//   completed after it (a self pair above T is a copy).
// Each side of the collective then holds at most size * T <= max(max_message_rows, size) rows.
// Its displacements in the caller's layout may still exceed the limit (a large pair before a
// small one); that side alone (send or receive, decided locally) then moves its collective pairs
// through a compact scratch buffer: packed before the call, unpacked after completion.
#include <algorithm>
#include <cstring>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "comm/mpi_types.hpp"
#include "core/error.hpp"

namespace embscale::comm {
namespace {

using detail::bytes;

// One side of the collective: count c for pairs with c <= per_pair, 0 for the others (they go
// point to point); displacements in the caller's layout. Returns false when one of those
// exceeds `limit`: the displacements are then compact (the side packs). Sets `any_large` when a
// pair exceeds per_pair.
bool collective_side(std::span<const std::size_t> counts, std::size_t per_pair, std::size_t limit,
                     std::vector<int>& out_counts, std::vector<int>& out_displs, bool& any_large) {
  out_counts.resize(counts.size());
  out_displs.resize(counts.size());
  bool fits = true;
  std::size_t displ = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const bool collective = counts[r] <= per_pair;
    any_large |= !collective;
    out_counts[r] = collective ? static_cast<int>(counts[r]) : 0;
    if (out_counts[r] > 0 && displ > limit) fits = false;
    out_displs[r] = fits ? static_cast<int>(displ) : 0;
    displ += counts[r];
  }
  if (fits) return true;
  displ = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    out_displs[r] = static_cast<int>(displ);
    displ += static_cast<std::size_t>(out_counts[r]);
  }
  return false;
}

// Rows of the collective part of one side.
std::size_t collective_rows(const std::vector<int>& counts) {
  std::size_t rows = 0;
  for (const int c : counts) rows += static_cast<std::size_t>(c);
  return rows;
}

// Copies the collective pairs between the caller's layout (`counts` in rows, contiguous in rank
// order) and the compact one (`compact_displs`): into compact when `pack`, out of it otherwise.
void move_compact(std::span<const std::size_t> counts, const std::vector<int>& collective_counts,
                  const std::vector<int>& compact_displs, std::size_t row_bytes, std::byte* caller, std::byte* compact,
                  bool pack) {
  std::size_t offset = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    const auto rows = static_cast<std::size_t>(collective_counts[r]);
    std::byte* in_caller = caller + offset * row_bytes;
    std::byte* in_compact = compact + static_cast<std::size_t>(compact_displs[r]) * row_bytes;
    if (rows > 0) std::memcpy(pack ? in_compact : in_caller, pack ? in_caller : in_compact, rows * row_bytes);
    offset += counts[r];
  }
}

}  // namespace

void MpiCommunicator::do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                                   std::span<const std::size_t> recv_counts, RowType type, Request* request) {
  EMBSCALE_EXPECTS(send_counts.size() == static_cast<std::size_t>(size_) && recv_counts.size() == send_counts.size(),
                   "alltoallv needs one send and one recv count per rank");
  const auto self = static_cast<std::size_t>(rank_);
  EMBSCALE_EXPECTS(send_counts[self] == recv_counts[self], "alltoallv: rows to self must equal rows from self");
  const MPI_Datatype dt = row_datatype(type);
  const std::size_t limit = max_message_rows_;
  const std::size_t per_pair = alltoallv_pair_limit_;

  // The normal case, blocking: every pair at most T and every displacement an int. One pass
  // fills the member arrays and counts the traffic; then one MPI_Alltoallv on the caller's buffers.
  if (!request) {
    const std::size_t n = send_counts.size();
    layout_.counts_a.resize(n);
    layout_.displs_a.resize(n);
    layout_.counts_b.resize(n);
    layout_.displs_b.resize(n);
    std::size_t send_at = 0, recv_at = 0;
    bool fits = true;
    for (std::size_t r = 0; r < n; ++r) {
      const std::size_t s = send_counts[r], v = recv_counts[r];
      fits &= (s <= per_pair) & (v <= per_pair) & (send_at <= limit) & (recv_at <= limit);
      layout_.counts_a[r] = static_cast<int>(s);
      layout_.displs_a[r] = static_cast<int>(send_at);
      layout_.counts_b[r] = static_cast<int>(v);
      layout_.displs_b[r] = static_cast<int>(recv_at);
      send_at += s;
      recv_at += v;
    }
    if (fits) {
      stats().record(CommOp::kAlltoallv, (send_at - send_counts[self]) * type.row_bytes,
                     (recv_at - recv_counts[self]) * type.row_bytes);
      check_mpi(MPI_Alltoallv(send, layout_.counts_a.data(), layout_.displs_a.data(), dt, recv, layout_.counts_b.data(),
                              layout_.displs_b.data(), dt, comm_),
                "MPI_Alltoallv");
      return;
    }
  }
  stats().record(CommOp::kAlltoallv, detail::bytes_to_others(send_counts, rank_, type.row_bytes),
                 detail::bytes_to_others(recv_counts, rank_, type.row_bytes));

  detail::CallRecord record(request);
  detail::MpiPending& pending = record.get();
  // MPI reads the arrays until completion: the record's when non-blocking, else the members.
  detail::IntLayout& layout = request ? pending.layout : layout_;
  bool large = false;
  const bool send_fits = collective_side(send_counts, per_pair, limit, layout.counts_a, layout.displs_a, large);
  const bool recv_fits = collective_side(recv_counts, per_pair, limit, layout.counts_b, layout.displs_b, large);
  const std::size_t rb = type.row_bytes;
  std::byte* in = const_cast<std::byte*>(bytes(send));
  std::byte* out = bytes(recv);

  std::size_t send_at = 0, recv_at = 0;
  for (int r = 0; r < size_; ++r) {
    const auto ur = static_cast<std::size_t>(r);
    if (r == rank_) {
      if (send_counts[ur] > per_pair) std::memcpy(out + recv_at * rb, in + send_at * rb, send_counts[ur] * rb);
    } else {
      if (recv_counts[ur] > per_pair)
        detail::post_chunked(pending, false, out + recv_at * rb, recv_counts[ur], rb, dt, r, chunk_comm_, limit);
      if (send_counts[ur] > per_pair)
        detail::post_chunked(pending, true, in + send_at * rb, send_counts[ur], rb, dt, r, chunk_comm_, limit);
    }
    send_at += send_counts[ur];
    recv_at += recv_counts[ur];
  }

  const void* collective_send = send;
  void* collective_recv = recv;
  if (!send_fits) {
    pending.send_scratch.resize(collective_rows(layout.counts_a) * rb);
    move_compact(send_counts, layout.counts_a, layout.displs_a, rb, in, pending.send_scratch.data(), true);
    collective_send = pending.send_scratch.data();
  }
  if (!recv_fits) {
    pending.recv_scratch.resize(collective_rows(layout.counts_b) * rb);
    collective_recv = pending.recv_scratch.data();
    // The caller's counts may be gone by completion: the step keeps its own copy.
    pending.on_complete = [&pending, &layout, counts = std::vector<std::size_t>(recv_counts.begin(), recv_counts.end()),
                           rb, out] {
      move_compact(counts, layout.counts_b, layout.displs_b, rb, out, pending.recv_scratch.data(), false);
    };
  }
  if (!request) {
    check_mpi(MPI_Alltoallv(collective_send, layout.counts_a.data(), layout.displs_a.data(), dt, collective_recv,
                            layout.counts_b.data(), layout.displs_b.data(), dt, comm_),
              "MPI_Alltoallv");
  } else {
    MPI_Request req;
    check_mpi(MPI_Ialltoallv(collective_send, layout.counts_a.data(), layout.displs_a.data(), dt, collective_recv,
                             layout.counts_b.data(), layout.displs_b.data(), dt, comm_, &req),
              "MPI_Ialltoallv");
    record.post(req);
  }
  record.finish();
}

void MpiCommunicator::do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) {
  // Every rank passes the same count (an MPI rule), so the choice below is the same everywhere.
  const auto ranks = static_cast<std::size_t>(size_);
  if (count * ranks > max_message_rows_) {
    const std::vector<std::size_t> counts(ranks, count);
    do_alltoallv(send, counts, recv, counts, type, request);
    return;
  }
  stats().record(CommOp::kAlltoall, count * (ranks - 1) * type.row_bytes, count * (ranks - 1) * type.row_bytes);
  const MPI_Datatype dt = row_datatype(type);
  const int n = static_cast<int>(count);
  if (!request) {
    check_mpi(MPI_Alltoall(send, n, dt, recv, n, dt, comm_), "MPI_Alltoall");
    return;
  }
  detail::CallRecord record(request);
  MPI_Request req;
  check_mpi(MPI_Ialltoall(send, n, dt, recv, n, dt, comm_, &req), "MPI_Ialltoall");
  record.post(req);
  record.finish();
}

}  // namespace embscale::comm
