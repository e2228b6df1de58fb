// Mapping of RowType to MPI datatypes, and the pending-operation record of MpiCommunicator.
// Internal to lib/comm.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "comm/communicator.hpp"

namespace embscale::comm::detail {

MPI_Datatype scalar_datatype(DataType type);
MPI_Op reduce_op(ReduceOp op);

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

// Everything a posted MPI operation needs until completion: its requests, the int count and
// displacement arrays MPI reads asynchronously, and packed scratch buffers.
class MpiPending final : public PendingOperation {
 public:
  std::vector<MPI_Request> requests;
  std::vector<int> counts_a, displs_a, counts_b, displs_b;
  std::vector<std::byte> scratch;

  MpiPending() = default;
  MpiPending(const MpiPending&) = delete;
  MpiPending& operator=(const MpiPending&) = delete;
  // Completes what was posted (unless an exception unwinds: see Request's destructor), so a
  // record dropped after a partial post never leaves MPI writing into freed memory.
  ~MpiPending() override;

  void wait() override;
  bool test() override;
};

}  // namespace embscale::comm::detail
