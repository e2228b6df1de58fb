// The Communicator over MPI (OpenMPI 4.1 here: MPI-3, no large-count calls). lib/comm is the MPI
// home of everything above it (DESIGN.md, "Where MPI is called").
//
// Counts beyond INT_MAX: MPI-3 takes int counts and displacements. Every operation checks its
// counts against max_message_rows(); when all fit it makes one MPI call with a contiguous
// datatype of one row, otherwise it falls back to a schedule of messages of at most that many
// rows each (point-to-point for the v-collectives, chunked collectives for the rest). The limit
// is settable so tests run the fallback on small data; every rank must set the same one.
//
// No agreement: every rank takes its branch from what it knows alone, and the branches of the
// ranks always fit together. Collectives whose counts every rank passes alike (bcast, allreduce,
// reduce, allgather, alltoall, reduce_scatter_block, reduce_scatter) decide the same everywhere.
// alltoallv decides per pair: both ends of a pair know its count c, so with T =
// max_message_rows() / size() (at least 1), pairs with c <= T travel in the one (I)Alltoallv every
// rank makes, larger pairs go in it with count 0 and travel as chunked point-to-point beside it
// (self pairs: a copy). The collective part then holds at most size() * T rows per side; where
// its displacements in the caller's layout still exceed the limit, that side alone packs its
// collective pairs into a compact scratch buffer (mpi_alltoallv.cpp).
//
// Cost: when everything fits, a blocking call is exactly the MPI call on the caller's buffers:
// no agreement, no copy, no heap allocation (the int arrays are member scratch; counting traffic
// is an array update). Non-blocking calls allocate their pending record.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/message_channel.hpp"
#include "comm/mpi_types.hpp"

namespace embscale::comm {

// Not final: StagedCommunicator (staged_communicator.hpp) is this class on staged host copies of
// device buffers.
class MpiCommunicator : public Communicator {
 public:
  // Wraps `comm` without owning it; the default, MPI_COMM_WORLD.
  explicit MpiCommunicator(MPI_Comm comm = MPI_COMM_WORLD);
  // A communicator over a duplicate of `comm` (its own tag space), freed with it. Collective.
  static std::unique_ptr<MpiCommunicator> duplicate(MPI_Comm comm);
  ~MpiCommunicator() override;
  MpiCommunicator(const MpiCommunicator&) = delete;
  MpiCommunicator& operator=(const MpiCommunicator&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::unique_ptr<Communicator> split(int color, int key) const override;
  std::unique_ptr<Communicator> split_by_host() const override;
  NativeHandle native_handle() const override { return {"mpi", &comm_}; }
  void barrier() override;

  MPI_Comm mpi_comm() const noexcept { return comm_; }

  static constexpr std::size_t kIntLimit = static_cast<std::size_t>(std::numeric_limits<int>::max());
  std::size_t max_message_rows() const noexcept { return max_message_rows_; }
  // Testing aid: lowers the per-message row limit so the large-count paths run on small data.
  void set_max_message_rows(std::size_t rows);

 protected:
  // Wraps `comm`, freeing it at the end when `owned` (a split's).
  MpiCommunicator(MPI_Comm comm, bool owned);

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
  friend class MpiMessageChannel;  // its messages are this class's send and recv, plus the two below
  // blocking: waits for a message (never nullopt); else nullopt when none is waiting.
  std::optional<MessageInfo> probe_message(int source, int tag, RowType type, bool blocking);
  MessageInfo receive_any(void* data, std::size_t capacity, RowType type, int source, int tag);

  // The MPI datatype of one row: the scalar's own for a one-value row (no lookup), else a
  // committed contiguous type created on first use and kept (a handful per run): creating and
  // freeing one per call would cost more than a small message.
  MPI_Datatype row_datatype(RowType type);
  // The point-to-point allgatherv schedule of counts beyond the limit (allgatherv, allgather).
  void allgatherv_chunked(const void* send, std::size_t send_count, void* recv,
                          std::span<const std::size_t> recv_counts, RowType type, MPI_Datatype dt, Request* request);

  MPI_Comm comm_;
  MPI_Comm chunk_comm_ = MPI_COMM_NULL;      // duplicate: the internal schedules of collectives
  MPI_Comm large_p2p_comm_ = MPI_COMM_NULL;  // duplicate: user send/recv beyond the row limit
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
  std::size_t max_message_rows_ = kIntLimit;
  // alltoallv's threshold T = max(1, max_message_rows_ / size_): pairs above it go point to point.
  std::size_t alltoallv_pair_limit_ = kIntLimit;
  // The int arrays of blocking calls (MPI reads them only during the call): reused, so a call
  // whose counts fit allocates nothing once they have reached size().
  detail::IntLayout layout_;
  // Derived row types: looked up by value (no pointer to follow per call), owned beside.
  std::vector<std::pair<RowType, MPI_Datatype>> row_types_;
  std::vector<std::unique_ptr<detail::RowDatatype>> owned_row_types_;
};

// Throws embscale::Error naming the MPI call and MPI's error string when rc != MPI_SUCCESS.
[[noreturn]] void throw_mpi_error(int rc, const char* call);
inline void check_mpi(int rc, const char* call) {
  if (rc != MPI_SUCCESS) [[unlikely]]
    throw_mpi_error(rc, call);
}

}  // namespace embscale::comm
