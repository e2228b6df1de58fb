// Communicator: the one interface every distributed algorithm of embscale talks through.
//
// * Typed front end over trivially copyable T. Counts are in elements of a "row": `row` values of
//   T moved as one unit (an embedding vector of dim floats is one row), so a count stays small
//   even when the bytes are not. Counts are std::size_t: an implementation must handle counts and
//   displacements beyond 2^31 rows (the MPI one splits such messages into pieces).
// * Point-to-point beyond the implementation's message limit: the receiver posts exactly the
//   sender's count, with an explicit source and tag.
// * Every operation exists blocking and non-blocking. A non-blocking call returns a Request that
//   owns what the transfer needs until wait() (count and displacement arrays, packed scratch);
//   the caller's data buffers must stay valid until then.
// * Traffic is counted per operation name: bytes_sent are the bytes this rank hands to the call
//   for other ranks, bytes_recv the bytes it gets from other ranks (self-copies are not traffic).
//   Reductions count their logical payload (count * sizeof(T)) both ways.
// * native_handle() exposes the transport's communicator (an MPI_Comm for "mpi") for libraries
//   that need it: parallel HDF5, NCCL bootstrap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace embscale::comm {

enum class ReduceOp { kSum, kMax, kMin };

// Scalar types the transport can reduce; anything else travels as bytes.
enum class DataType { kBytes, kInt32, kInt64, kUInt64, kFloat32, kFloat64 };

template <class T>
constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<T, std::int32_t>) return DataType::kInt32;
  else if constexpr (std::is_same_v<T, std::int64_t>) return DataType::kInt64;
  else if constexpr (std::is_same_v<T, std::uint64_t>) return DataType::kUInt64;
  else if constexpr (std::is_same_v<T, float>) return DataType::kFloat32;
  else if constexpr (std::is_same_v<T, double>) return DataType::kFloat64;
  else return DataType::kBytes;
}

// One unit of transfer: `row_values` scalars of `type`, `row_bytes` bytes in all.
struct RowType {
  DataType type = DataType::kBytes;
  std::size_t row_values = 1;
  std::size_t row_bytes = 1;
};

template <class T>
constexpr RowType row_type_of(std::size_t row = 1) {
  return RowType{data_type_of<T>(), row, row * sizeof(T)};
}

struct OpStats {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
};

class CommStats {
 public:
  void record(const std::string& op, std::uint64_t sent, std::uint64_t recv);
  const std::map<std::string, OpStats>& by_op() const noexcept { return by_op_; }
  OpStats total() const noexcept;
  void reset() noexcept { by_op_.clear(); }

 private:
  std::map<std::string, OpStats> by_op_;
};

// What an in-flight operation holds until it completes; defined by the implementation.
class PendingOperation {
 public:
  virtual ~PendingOperation() = default;
  virtual void wait() = 0;
  virtual bool test() = 0;
};

// Handle of a non-blocking operation. Move-only; waits in its destructor if still pending, so an
// exception cannot leave MPI writing into freed memory.
class Request {
 public:
  Request() = default;
  explicit Request(std::unique_ptr<PendingOperation> op) : op_(std::move(op)) {}
  Request(Request&&) noexcept = default;
  Request& operator=(Request&& other) noexcept;
  Request(const Request&) = delete;
  Request& operator=(const Request&) = delete;
  ~Request();

  void wait();
  bool test();  // true when complete (then the request is empty)
  bool pending() const noexcept { return op_ != nullptr; }

 private:
  std::unique_ptr<PendingOperation> op_;
};

void wait_all(std::span<Request> requests);

struct NativeHandle {
  std::string kind;         // "mpi"
  const void* handle = nullptr;  // for "mpi": points to an MPI_Comm
};

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::unique_ptr<Communicator> split(int color, int key) const = 0;
  virtual std::unique_ptr<Communicator> split_by_host() const = 0;
  virtual NativeHandle native_handle() const = 0;
  virtual void barrier() = 0;

  CommStats& stats() noexcept { return stats_; }
  const CommStats& stats() const noexcept { return stats_; }

  // ---- typed front end ----------------------------------------------------------------------
  template <class T> void bcast(std::span<T> data, int root, std::size_t row = 1) {
    check_trivial<T>(); do_bcast(data.data(), data.size() / row, row_type_of<T>(row), root, nullptr);
  }
  template <class T> Request ibcast(std::span<T> data, int root, std::size_t row = 1) {
    check_trivial<T>(); Request r; do_bcast(data.data(), data.size() / row, row_type_of<T>(row), root, &r); return r;
  }

  template <class T> void allreduce(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    do_allreduce(send.data(), recv.data(), send.size(), row_type_of<T>(), op, nullptr);
  }
  template <class T> Request iallreduce(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    Request r; do_allreduce(send.data(), recv.data(), send.size(), row_type_of<T>(), op, &r); return r;
  }
  template <class T> T allreduce(T value, ReduceOp op) {
    T out{};
    do_allreduce(&value, &out, 1, row_type_of<T>(), op, nullptr);
    return out;
  }

  // Element-wise reduction of `send` (sum of recv_counts rows, in rank order) over all ranks;
  // rank r receives the reduced segment r of recv_counts[r] rows.
  template <class T> void reduce_scatter(std::span<const T> send, std::span<T> recv,
                                         std::span<const std::size_t> recv_counts, ReduceOp op,
                                         std::size_t row = 1) {
    do_reduce_scatter(send.data(), recv.data(), recv_counts, row_type_of<T>(row), op, nullptr);
  }
  template <class T> Request ireduce_scatter(std::span<const T> send, std::span<T> recv,
                                             std::span<const std::size_t> recv_counts, ReduceOp op,
                                             std::size_t row = 1) {
    Request r; do_reduce_scatter(send.data(), recv.data(), recv_counts, row_type_of<T>(row), op, &r); return r;
  }

  // gatherv: rank r contributes send (recv_counts[r] rows); root receives them in rank order.
  // Every rank passes the full recv_counts (all must agree on the schedule; checked).
  template <class T> void gatherv(std::span<const T> send, std::span<T> recv,
                                  std::span<const std::size_t> recv_counts, int root, std::size_t row = 1) {
    check_trivial<T>(); do_gatherv(send.data(), send.size() / row, recv.data(), recv_counts, row_type_of<T>(row), root, nullptr);
  }
  template <class T> std::vector<T> gather(const T& value, int root) {
    std::vector<T> out(rank() == root ? static_cast<std::size_t>(size()) : 0);
    std::vector<std::size_t> counts(static_cast<std::size_t>(size()), 1);
    gatherv(std::span<const T>(&value, 1), std::span<T>(out), std::span<const std::size_t>(counts), root);
    return out;
  }
  template <class T> void allgatherv(std::span<const T> send, std::span<T> recv,
                                     std::span<const std::size_t> recv_counts, std::size_t row = 1) {
    check_trivial<T>(); do_allgatherv(send.data(), send.size() / row, recv.data(), recv_counts, row_type_of<T>(row), nullptr);
  }
  template <class T> Request iallgatherv(std::span<const T> send, std::span<T> recv,
                                         std::span<const std::size_t> recv_counts, std::size_t row = 1) {
    check_trivial<T>(); Request r; do_allgatherv(send.data(), send.size() / row, recv.data(), recv_counts, row_type_of<T>(row), &r); return r;
  }
  template <class T> std::vector<T> allgather(const T& value) {
    std::vector<T> out(static_cast<std::size_t>(size()));
    std::vector<std::size_t> counts(static_cast<std::size_t>(size()), 1);
    allgatherv(std::span<const T>(&value, 1), std::span<T>(out), std::span<const std::size_t>(counts));
    return out;
  }

  // alltoallv: send holds, in rank order, send_counts[r] rows for rank r; recv gets, in rank
  // order, recv_counts[r] rows from rank r.
  template <class T> void alltoallv(std::span<const T> send, std::span<const std::size_t> send_counts,
                                    std::span<T> recv, std::span<const std::size_t> recv_counts,
                                    std::size_t row = 1) {
    check_trivial<T>(); do_alltoallv(send.data(), send_counts, recv.data(), recv_counts, row_type_of<T>(row), nullptr);
  }
  template <class T> Request ialltoallv(std::span<const T> send, std::span<const std::size_t> send_counts,
                                        std::span<T> recv, std::span<const std::size_t> recv_counts,
                                        std::size_t row = 1) {
    check_trivial<T>(); Request r; do_alltoallv(send.data(), send_counts, recv.data(), recv_counts, row_type_of<T>(row), &r); return r;
  }
  // alltoall: `count` rows to every rank (send and recv hold size() * count rows); every rank
  // passes the same count.
  template <class T> void alltoall(std::span<const T> send, std::span<T> recv, std::size_t count,
                                   std::size_t row = 1) {
    check_trivial<T>(); do_alltoall(send.data(), recv.data(), count, row_type_of<T>(row), nullptr);
  }
  template <class T> Request ialltoall(std::span<const T> send, std::span<T> recv, std::size_t count,
                                       std::size_t row = 1) {
    check_trivial<T>(); Request r; do_alltoall(send.data(), recv.data(), count, row_type_of<T>(row), &r); return r;
  }

  template <class T> void send(std::span<const T> data, int dest, int tag, std::size_t row = 1) {
    check_trivial<T>(); do_send(data.data(), data.size() / row, row_type_of<T>(row), dest, tag, nullptr);
  }
  template <class T> Request isend(std::span<const T> data, int dest, int tag, std::size_t row = 1) {
    check_trivial<T>(); Request r; do_send(data.data(), data.size() / row, row_type_of<T>(row), dest, tag, &r); return r;
  }
  template <class T> void recv(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>(); do_recv(data.data(), data.size() / row, row_type_of<T>(row), source, tag, nullptr);
  }
  template <class T> Request irecv(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>(); Request r; do_recv(data.data(), data.size() / row, row_type_of<T>(row), source, tag, &r); return r;
  }

 protected:
  // Implementation hooks: blocking when `request` is null, else the operation is started and
  // handed over in *request. Counts are in rows of `type`.
  virtual void do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) = 0;
  virtual void do_allreduce(const void* send, void* recv, std::size_t count, RowType type,
                            ReduceOp op, Request* request) = 0;
  virtual void do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts,
                                 RowType type, ReduceOp op, Request* request) = 0;
  virtual void do_gatherv(const void* send, std::size_t send_count, void* recv,
                          std::span<const std::size_t> recv_counts, RowType type, int root,
                          Request* request) = 0;
  virtual void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                             std::span<const std::size_t> recv_counts, RowType type, Request* request) = 0;
  virtual void do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                            std::span<const std::size_t> recv_counts, RowType type, Request* request) = 0;
  virtual void do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) = 0;
  virtual void do_send(const void* data, std::size_t count, RowType type, int dest, int tag,
                       Request* request) = 0;
  virtual void do_recv(void* data, std::size_t count, RowType type, int source, int tag,
                       Request* request) = 0;

 private:
  template <class T> static constexpr void check_trivial() {
    static_assert(std::is_trivially_copyable_v<T>, "Communicator moves raw bytes: T must be trivially copyable");
  }
  CommStats stats_;
};

// Collective: `texts` as given on `root`, on every rank (the count must agree everywhere).
// Two broadcasts: the sizes, then the joined bytes.
std::vector<std::string> broadcast_strings(Communicator& comm, std::vector<std::string> texts, int root = 0);

}  // namespace embscale::comm
