// Communicator: the one interface every collective algorithm of embscale talks through, and
// exactly what a collective library can implement in full (NCCL: its collectives, and send and
// receive with an explicit peer). What a serve loop needs beyond that (a receive from any source,
// a probe) is a MessageChannel's (message_channel.hpp), a transport of its own.
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

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

#include "core/execution_context.hpp"
#include "core/half_float.hpp"

namespace embscale::comm {

// NCCL's reduction operations. kAvg is the sum divided by the number of ranks, in the element
// type (integers: truncated toward zero, as ncclAvg does); MPI has no average, so the MPI
// implementation sums and divides on completion.
enum class ReduceOp { kSum, kProd, kMax, kMin, kAvg };

// Scalar types the transport can reduce (NCCL's types); anything else travels as bytes. Half and
// BFloat16 (core/half_float.hpp) are reduced in float and rounded back once per pairwise step.
enum class DataType {
  kBytes,
  kInt32,
  kInt64,
  kUInt64,
  kFloat32,
  kFloat64,
  kInt8,
  kUInt8,
  kUInt32,
  kFloat16,
  kBFloat16
};

template <class T> constexpr DataType data_type_of() {
  if constexpr (std::is_same_v<T, std::int8_t>) return DataType::kInt8;
  else if constexpr (std::is_same_v<T, std::uint8_t>) return DataType::kUInt8;
  else if constexpr (std::is_same_v<T, std::uint32_t>) return DataType::kUInt32;
  else if constexpr (std::is_same_v<T, Half>) return DataType::kFloat16;
  else if constexpr (std::is_same_v<T, BFloat16>) return DataType::kBFloat16;
  else if constexpr (std::is_same_v<T, std::int32_t>) return DataType::kInt32;
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

template <class T> constexpr RowType row_type_of(std::size_t row = 1) {
  return RowType{data_type_of<T>(), row, row * sizeof(T)};
}

struct OpStats {
  std::uint64_t calls = 0;
  std::uint64_t bytes_sent = 0;
  std::uint64_t bytes_recv = 0;
};

// The operations the implementations count, by name (comm_op_name). Recording one is an array
// update: a few nanoseconds, so that counting stays far below the cost of a small message.
enum class CommOp : std::uint8_t {
  kBarrier,
  kBcast,
  kAllreduce,
  kReduceScatter,
  kGatherv,
  kAllgatherv,
  kAlltoallv,
  kAlltoall,
  kAllgather,
  kReduce,
  kReduceScatterBlock,
  kSendrecv,
  kSend,
  kRecv,
  kCount
};
const char* comm_op_name(CommOp op) noexcept;

class CommStats {
 public:
  void record(CommOp op, std::uint64_t sent, std::uint64_t recv) noexcept {
    OpStats& s = fixed_[static_cast<std::size_t>(op)];
    ++s.calls;
    s.bytes_sent += sent;
    s.bytes_recv += recv;
  }
  // Any other name (a map update).
  void record(const std::string& op, std::uint64_t sent, std::uint64_t recv);
  // Every operation called since the last reset, by name. The map is rebuilt by each call of
  // by_op(): a reference taken earlier does not see later calls.
  const std::map<std::string, OpStats>& by_op() const;
  OpStats total() const noexcept;
  void reset() noexcept;

 private:
  std::array<OpStats, static_cast<std::size_t>(CommOp::kCount)> fixed_{};
  std::map<std::string, OpStats> named_;
  mutable std::map<std::string, OpStats> by_op_;
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
  std::string kind;              // "mpi", "nccl"
  const void* handle = nullptr;  // for "mpi": points to an MPI_Comm; for "nccl": the ncclComm_t
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
  // Where the buffers handed to its calls live: host memory (MPI), or the current GPU's (NCCL).
  virtual MemorySpace memory_space() const { return MemorySpace::kHost; }
  // The communicator of the same ranks over host memory, for what a caller exchanges from the host
  // (a count, a verdict, a layer's set-up): this one when its buffers are host memory, else the
  // one it was bootstrapped on. The value helpers below, broadcast_strings and comm/failure.hpp's
  // agreements use it, so they work on any communicator.
  virtual Communicator& host_communicator() { return *this; }

  CommStats& stats() noexcept { return stats_; }
  const CommStats& stats() const noexcept { return stats_; }

  // ---- typed front end ----------------------------------------------------------------------
  template <class T> void bcast(std::span<T> data, int root, std::size_t row = 1) {
    check_trivial<T>();
    do_bcast(data.data(), rows_in(data.size(), row), row_type_of<T>(row), root, nullptr);
  }
  template <class T> Request ibcast(std::span<T> data, int root, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_bcast(data.data(), rows_in(data.size(), row), row_type_of<T>(row), root, &r);
    return r;
  }

  template <class T> void allreduce(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    do_allreduce(send.data(), recv.data(), send.size(), row_type_of<T>(), op, nullptr);
  }
  template <class T> Request iallreduce(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    Request r;
    do_allreduce(send.data(), recv.data(), send.size(), row_type_of<T>(), op, &r);
    return r;
  }
  // The value helpers (allreduce of one value, gather, allgather of one value) exchange host
  // values: over host_communicator() when this one's buffers are device memory.
  template <class T> T allreduce(T value, ReduceOp op) {
    if (Communicator& host = host_communicator(); &host != this) return host.allreduce(value, op);
    T out{};
    do_allreduce(&value, &out, 1, row_type_of<T>(), op, nullptr);
    return out;
  }

  // Element-wise reduction of `send` (sum of recv_counts rows, in rank order) over all ranks;
  // rank r receives the reduced segment r of recv_counts[r] rows.
  template <class T>
  void reduce_scatter(std::span<const T> send, std::span<T> recv, std::span<const std::size_t> recv_counts, ReduceOp op,
                      std::size_t row = 1) {
    do_reduce_scatter(send.data(), recv.data(), recv_counts, row_type_of<T>(row), op, nullptr);
  }
  template <class T>
  Request ireduce_scatter(std::span<const T> send, std::span<T> recv, std::span<const std::size_t> recv_counts,
                          ReduceOp op, std::size_t row = 1) {
    Request r;
    do_reduce_scatter(send.data(), recv.data(), recv_counts, row_type_of<T>(row), op, &r);
    return r;
  }

  // gatherv: rank r contributes send (recv_counts[r] rows); root receives them in rank order.
  // Every rank passes the full recv_counts (all must agree on the schedule; checked).
  template <class T>
  void gatherv(std::span<const T> send, std::span<T> recv, std::span<const std::size_t> recv_counts, int root,
               std::size_t row = 1) {
    check_trivial<T>();
    do_gatherv(send.data(), rows_in(send.size(), row), recv.data(), recv_counts, row_type_of<T>(row), root, nullptr);
  }
  template <class T> std::vector<T> gather(const T& value, int root) {
    if (Communicator& host = host_communicator(); &host != this) return host.gather(value, root);
    std::vector<T> out(rank() == root ? static_cast<std::size_t>(size()) : 0);
    std::vector<std::size_t> counts(static_cast<std::size_t>(size()), 1);
    gatherv(std::span<const T>(&value, 1), std::span<T>(out), std::span<const std::size_t>(counts), root);
    return out;
  }
  template <class T>
  void allgatherv(std::span<const T> send, std::span<T> recv, std::span<const std::size_t> recv_counts,
                  std::size_t row = 1) {
    check_trivial<T>();
    do_allgatherv(send.data(), rows_in(send.size(), row), recv.data(), recv_counts, row_type_of<T>(row), nullptr);
  }
  template <class T>
  Request iallgatherv(std::span<const T> send, std::span<T> recv, std::span<const std::size_t> recv_counts,
                      std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_allgatherv(send.data(), rows_in(send.size(), row), recv.data(), recv_counts, row_type_of<T>(row), &r);
    return r;
  }
  template <class T> std::vector<T> allgather(const T& value) {
    if (Communicator& host = host_communicator(); &host != this) return host.allgather(value);
    std::vector<T> out(static_cast<std::size_t>(size()));
    std::vector<std::size_t> counts(static_cast<std::size_t>(size()), 1);
    allgatherv(std::span<const T>(&value, 1), std::span<T>(out), std::span<const std::size_t>(counts));
    return out;
  }

  // allgather: every rank contributes `send` (the same number of rows on every rank); recv holds
  // size() times that many rows, in rank order. In place when send is this rank's segment of recv
  // (send.data() == recv.data() + rank() * send.size()).
  template <class T> void allgather(std::span<const T> send, std::span<T> recv, std::size_t row = 1) {
    check_trivial<T>();
    do_allgather(send.data(), recv.data(), rows_in(send.size(), row), row_type_of<T>(row), nullptr);
  }
  template <class T> Request iallgather(std::span<const T> send, std::span<T> recv, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_allgather(send.data(), recv.data(), rows_in(send.size(), row), row_type_of<T>(row), &r);
    return r;
  }

  // reduce: the element-wise reduction of every rank's `send` lands in `recv` on `root` (recv is
  // not touched elsewhere and may be empty there). In place on the root when send and recv are
  // the same buffer.
  template <class T> void reduce(std::span<const T> send, std::span<T> recv, ReduceOp op, int root) {
    do_reduce(send.data(), recv.data(), send.size(), row_type_of<T>(), op, root, nullptr);
  }
  template <class T> Request ireduce(std::span<const T> send, std::span<T> recv, ReduceOp op, int root) {
    Request r;
    do_reduce(send.data(), recv.data(), send.size(), row_type_of<T>(), op, root, &r);
    return r;
  }

  // reduce_scatter_block: send holds size() segments of recv.size() values; rank r receives the
  // element-wise reduction of segment r over all ranks. In place (MPI's convention) when send and
  // recv start at the same address: the buffer holds all segments and the result replaces its
  // first segment.
  template <class T> void reduce_scatter_block(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    do_reduce_scatter_block(send.data(), recv.data(), recv.size(), row_type_of<T>(), op, nullptr);
  }
  template <class T> Request ireduce_scatter_block(std::span<const T> send, std::span<T> recv, ReduceOp op) {
    Request r;
    do_reduce_scatter_block(send.data(), recv.data(), recv.size(), row_type_of<T>(), op, &r);
    return r;
  }

  // alltoallv: send holds, in rank order, send_counts[r] rows for rank r; recv gets, in rank
  // order, recv_counts[r] rows from rank r.
  template <class T>
  void alltoallv(std::span<const T> send, std::span<const std::size_t> send_counts, std::span<T> recv,
                 std::span<const std::size_t> recv_counts, std::size_t row = 1) {
    check_trivial<T>();
    do_alltoallv(send.data(), send_counts, recv.data(), recv_counts, row_type_of<T>(row), nullptr);
  }
  template <class T>
  Request ialltoallv(std::span<const T> send, std::span<const std::size_t> send_counts, std::span<T> recv,
                     std::span<const std::size_t> recv_counts, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_alltoallv(send.data(), send_counts, recv.data(), recv_counts, row_type_of<T>(row), &r);
    return r;
  }
  // alltoall: `count` rows to every rank (send and recv hold size() * count rows); every rank
  // passes the same count.
  template <class T> void alltoall(std::span<const T> send, std::span<T> recv, std::size_t count, std::size_t row = 1) {
    check_trivial<T>();
    do_alltoall(send.data(), recv.data(), count, row_type_of<T>(row), nullptr);
  }
  template <class T>
  Request ialltoall(std::span<const T> send, std::span<T> recv, std::size_t count, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_alltoall(send.data(), recv.data(), count, row_type_of<T>(row), &r);
    return r;
  }

  template <class T> void send(std::span<const T> data, int dest, int tag, std::size_t row = 1) {
    check_trivial<T>();
    do_send(data.data(), rows_in(data.size(), row), row_type_of<T>(row), dest, tag, nullptr);
  }
  template <class T> Request isend(std::span<const T> data, int dest, int tag, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_send(data.data(), rows_in(data.size(), row), row_type_of<T>(row), dest, tag, &r);
    return r;
  }
  // sendrecv: sends `send` to `dest` and receives `recv` from `source` as one operation, so a
  // ring of them (each rank sends right, receives from the left) cannot deadlock. The receiver
  // posts exactly the sender's count (as recv does). send and recv must not overlap.
  template <class T>
  void sendrecv(std::span<const T> send, int dest, int send_tag, std::span<T> recv, int source, int recv_tag,
                std::size_t row = 1) {
    check_trivial<T>();
    do_sendrecv(send.data(), rows_in(send.size(), row), dest, send_tag, recv.data(), rows_in(recv.size(), row), source,
                recv_tag, row_type_of<T>(row), nullptr);
  }
  template <class T>
  Request isendrecv(std::span<const T> send, int dest, int send_tag, std::span<T> recv, int source, int recv_tag,
                    std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_sendrecv(send.data(), rows_in(send.size(), row), dest, send_tag, recv.data(), rows_in(recv.size(), row), source,
                recv_tag, row_type_of<T>(row), &r);
    return r;
  }

  template <class T> void recv(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>();
    do_recv(data.data(), rows_in(data.size(), row), row_type_of<T>(row), source, tag, nullptr);
  }
  template <class T> Request irecv(std::span<T> data, int source, int tag, std::size_t row = 1) {
    check_trivial<T>();
    Request r;
    do_recv(data.data(), rows_in(data.size(), row), row_type_of<T>(row), source, tag, &r);
    return r;
  }

 protected:
  // Implementation hooks: blocking when `request` is null, else the operation is started and
  // handed over in *request. Counts are in rows of `type`.
  virtual void do_bcast(void* data, std::size_t count, RowType type, int root, Request* request) = 0;
  virtual void do_allreduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                            Request* request) = 0;
  virtual void do_reduce_scatter(const void* send, void* recv, std::span<const std::size_t> recv_counts, RowType type,
                                 ReduceOp op, Request* request) = 0;
  virtual void do_gatherv(const void* send, std::size_t send_count, void* recv,
                          std::span<const std::size_t> recv_counts, RowType type, int root, Request* request) = 0;
  virtual void do_allgatherv(const void* send, std::size_t send_count, void* recv,
                             std::span<const std::size_t> recv_counts, RowType type, Request* request) = 0;
  virtual void do_alltoallv(const void* send, std::span<const std::size_t> send_counts, void* recv,
                            std::span<const std::size_t> recv_counts, RowType type, Request* request) = 0;
  virtual void do_alltoall(const void* send, void* recv, std::size_t count, RowType type, Request* request) = 0;
  virtual void do_allgather(const void* send, void* recv, std::size_t count, RowType type, Request* request) = 0;
  virtual void do_reduce(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op, int root,
                         Request* request) = 0;
  virtual void do_reduce_scatter_block(const void* send, void* recv, std::size_t count, RowType type, ReduceOp op,
                                       Request* request) = 0;
  virtual void do_sendrecv(const void* send, std::size_t send_count, int dest, int send_tag, void* recv,
                           std::size_t recv_count, int source, int recv_tag, RowType type, Request* request) = 0;
  virtual void do_send(const void* data, std::size_t count, RowType type, int dest, int tag, Request* request) = 0;
  virtual void do_recv(void* data, std::size_t count, RowType type, int source, int tag, Request* request) = 0;

 private:
  // Rows in `values` values: no division for the one-value rows most calls pass (a 64-bit division
  // costs tens of cycles on every call otherwise).
  static constexpr std::size_t rows_in(std::size_t values, std::size_t row) noexcept {
    return row == 1 ? values : values / row;
  }
  template <class T> static constexpr void check_trivial() {
    static_assert(std::is_trivially_copyable_v<T>, "Communicator moves raw bytes: T must be trivially copyable");
  }
  CommStats stats_;
};

// The rows of a v-collective's counts (what one rank sends, or receives, in all).
inline std::size_t total_count(std::span<const std::size_t> counts) noexcept {
  std::size_t n = 0;
  for (const auto c : counts) n += c;
  return n;
}

namespace detail {
// Bytes of the rows in `counts` that go to (or come from) ranks other than `self`: what every
// implementation counts as a v-collective's traffic (self-copies are not traffic).
inline std::uint64_t bytes_to_others(std::span<const std::size_t> counts, int self, std::size_t row_bytes) noexcept {
  std::uint64_t rows = 0;
  for (std::size_t r = 0; r < counts.size(); ++r)
    if (static_cast<int>(r) != self) rows += counts[r];
  return rows * row_bytes;
}
}  // namespace detail

// Collective: `texts` as given on `root`, on every rank (the count must agree everywhere).
// Two broadcasts (the sizes, then the joined bytes) over comm.host_communicator().
std::vector<std::string> broadcast_strings(Communicator& comm, std::vector<std::string> texts, int root = 0);

}  // namespace embscale::comm
