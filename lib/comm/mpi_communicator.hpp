// The Communicator over MPI (OpenMPI here). With lib/report, the only home of MPI_* calls.
//
// Cost of safety: a blocking alltoallv first agrees on its schedule with a one-integer
// allreduce (each rank sees only its own counts); ialltoallv never blocks and always takes the
// point-to-point schedule.
//
// Counts beyond INT_MAX: MPI-3 takes int counts and displacements. Every operation checks its
// counts against max_message_rows(); when all fit it makes one MPI call with a contiguous
// datatype of one row, otherwise it falls back to a schedule of messages of at most that many
// rows each (point-to-point for the v-collectives, chunked collectives for the rest). The limit
// is settable so tests run the fallback on small data.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/mpi_types.hpp"

namespace embscale::comm {

class MpiCommunicator final : public Communicator {
 public:
  // Wraps `comm` without owning it (MPI_COMM_WORLD).
  explicit MpiCommunicator(MPI_Comm comm);
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
  void do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) override;
  void do_allreduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                    Request* request) override;
  void do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                         RowType type, ReduceOp op, Request* request) override;
  void do_gatherv(const void* send, std::size_t send_count, void* recv,
                  std::span<const std::size_t> recv_counts, RowType type, int root,
                  Request* request) override;
  void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                     std::span<const std::size_t> recv_counts, RowType type, Request* request) override;
  void do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                    std::span<const std::size_t> recv_counts, RowType type, Request* request) override;
  void do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) override;
  void do_send(const void* data, std::size_t count, RowType type, int dest, int tag,
               Request* request) override;
  void do_recv(void* data, std::size_t count, RowType type, int source, int tag,
               Request* request) override;

 private:
  MpiCommunicator(MPI_Comm comm, bool owned);
  // The committed MPI datatype of one row, created on first use and kept (a handful per run):
  // creating and freeing one per call would cost more than a small message.
  MPI_Datatype row_datatype(RowType type);

  MPI_Comm comm_;
  MPI_Comm chunk_comm_ = MPI_COMM_NULL;      // duplicate: collective schedules and agreements
  MPI_Comm large_p2p_comm_ = MPI_COMM_NULL;  // duplicate: user send/recv beyond the row limit
  bool owned_;
  int rank_ = 0;
  int size_ = 1;
  std::size_t max_message_rows_ = kIntLimit;
  std::vector<std::pair<RowType, std::unique_ptr<detail::RowDatatype>>> row_types_;
};

// Throws embscale::Error naming the MPI call and MPI's error string when rc != MPI_SUCCESS.
void check_mpi(int rc, const char* call);

}  // namespace embscale::comm
