// Mapping of RowType and ReduceOp to MPI, the pending-operation record of MpiCommunicator and the
// point-to-point schedule its large-count paths share. Internal to lib/comm.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "comm/communicator.hpp"

namespace embscale::comm::detail {

// The user operation on Half or BFloat16 scalars (kAvg: their sum); created on first use, freed
// when MPI_Finalize deletes MPI_COMM_SELF's attributes (MPI's hook for cleanup before finalize).
MPI_Op half_reduce_op(ReduceOp op, DataType type);
MPI_Datatype half_datatype(DataType type);
[[noreturn]] void throw_unknown(const char* what, int value);

// MPI's type of one scalar. Half and BFloat16 are a 2-byte type of ours (mpi_half_ops.cpp).
// Inline, as the two mappings below: every call of the Communicator passes through them, and a
// 1 KiB collective over shared memory takes well under a microsecond.
inline MPI_Datatype scalar_datatype(DataType type) {
  switch (type) {
    case DataType::kBytes: return MPI_BYTE;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUInt64: return MPI_UINT64_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kUInt8: return MPI_UINT8_T;
    case DataType::kUInt32: return MPI_UINT32_T;
    case DataType::kFloat16:
    case DataType::kBFloat16: return half_datatype(type);
  }
  throw_unknown("DataType", static_cast<int>(type));
}

// MPI's operation for `op` on scalars of `type`: the predefined ones for MPI's own types (kAvg is
// MPI_SUM: the caller divides afterwards, divide_for_average), commutative user operations that
// compute in float for Half and BFloat16.
inline MPI_Op reduce_op(ReduceOp op, DataType type) {
  if (type == DataType::kFloat16 || type == DataType::kBFloat16) return half_reduce_op(op, type);
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAvg: return MPI_SUM;
    case ReduceOp::kProd: return MPI_PROD;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  throw_unknown("ReduceOp", static_cast<int>(op));
}
// kAvg's last step: divides `values` scalars of `type` in place by `ranks`, in the element type
// (integers truncate toward zero; Half and BFloat16 divide in float and round once).
void divide_for_average(void* data, std::size_t values, DataType type, int ranks);

// A contiguous MPI datatype of one row, committed; freed on destruction. MPI defers the actual
// release until operations already started with it complete, so a non-blocking call may drop
// it as soon as the operation is posted.
class RowDatatype {
 public:
  explicit RowDatatype(RowType type);
  ~RowDatatype();
  RowDatatype(const RowDatatype&) = delete;
  RowDatatype& operator=(const RowDatatype&) = delete;
  MPI_Datatype get() const noexcept { return type_; }

 private:
  MPI_Datatype type_ = MPI_DATATYPE_NULL;
  bool derived_ = false;
};

// The int count and displacement arrays of one v-collective call (a: send side, b: receive side).
struct IntLayout {
  std::vector<int> counts_a, displs_a, counts_b, displs_b;
};

// Everything a posted MPI operation needs until completion: its requests, the int arrays MPI
// reads asynchronously, packed scratch buffers, and a completion step (kAvg's division, unpacking
// a packed receive) that wait() or a successful test() runs once, after every request completed.
class MpiPending final : public PendingOperation {
 public:
  std::vector<MPI_Request> requests;
  IntLayout layout;
  std::vector<std::byte> send_scratch, recv_scratch;
  std::function<void()> on_complete;

  MpiPending() = default;
  MpiPending(const MpiPending&) = delete;
  MpiPending& operator=(const MpiPending&) = delete;
  // Completes what was posted (unless an exception unwinds: see Request's destructor), so a
  // record dropped after a partial post never leaves MPI writing into freed memory.
  ~MpiPending() override;

  void wait() override;
  bool test() override;

 private:
  void complete();
};

// The record of one call on a schedule that may take several MPI operations: on the heap when
// non-blocking (finish() hands it to the caller's Request), on the stack when blocking (finish()
// waits for it, running its completion step). Blocking calls that need one MPI call skip it.
class CallRecord {
 public:
  explicit CallRecord(Request* request)
      : request_(request), heap_(request ? std::make_unique<MpiPending>() : nullptr) {}
  MpiPending& get() noexcept { return heap_ ? *heap_ : local_; }
  bool blocking() const noexcept { return request_ == nullptr; }
  void post(MPI_Request r) { get().requests.push_back(r); }
  void finish() {
    if (request_) *request_ = Request(std::move(heap_));
    else local_.wait();
  }

 private:
  Request* request_;
  std::unique_ptr<MpiPending> heap_;
  MpiPending local_;
};

// Calls piece(first, n) over consecutive pieces of at most `limit` of `count` items, n as MPI's
// int; once with n = 0 when count is 0, since every rank must still join a collective.
template <class Piece> void for_pieces(std::size_t count, std::size_t limit, Piece&& piece) {
  std::size_t first = 0;
  do {
    const std::size_t n = count - first < limit ? count - first : limit;
    piece(first, static_cast<int>(n));
    first += n;
  } while (first < count);
}

// kAvg's last step, on `values` scalars at `data` (nothing for other ops or a null buffer): now
// when `pending` is null (a blocking call, its sum complete), else as pending's completion step.
void average_step_now_or_later(MpiPending* pending, void* data, std::size_t values, DataType type, int ranks);
inline void average_step(ReduceOp op, MpiPending* pending, void* data, std::size_t values, DataType type, int ranks) {
  if (op == ReduceOp::kAvg && data != nullptr) average_step_now_or_later(pending, data, values, type, ranks);
}

inline const std::byte* bytes(const void* p) noexcept { return static_cast<const std::byte*>(p); }
inline std::byte* bytes(void* p) noexcept { return static_cast<std::byte*>(p); }

// Tag of the internal point-to-point messages of the collective schedules. They travel on a
// duplicate of the user's communicator (chunk_comm_), so they never match a user's send/recv;
// pieces of one transfer keep their order because MPI never reorders messages between the same
// pair on the same communicator and tag.
inline constexpr int kChunkTag = 7001;

// Posts `rows` rows as messages of at most `limit` rows each. Sender and receiver cut the same
// pieces because they pass the same row count.
void post_chunked(MpiPending& p, bool is_send, void* base, std::size_t rows, std::size_t row_bytes, MPI_Datatype type,
                  int peer, MPI_Comm comm, std::size_t limit, int tag = kChunkTag);

}  // namespace embscale::comm::detail
