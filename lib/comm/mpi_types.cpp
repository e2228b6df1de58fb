#include "comm/mpi_types.hpp"

#include <exception>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"

namespace embscale::comm::detail {

MPI_Datatype scalar_datatype(DataType type) {
  switch (type) {
    case DataType::kBytes: return MPI_BYTE;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUInt64: return MPI_UINT64_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
  }
  throw Error("unknown DataType");
}

MPI_Op reduce_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum: return MPI_SUM;
    case ReduceOp::kMax: return MPI_MAX;
    case ReduceOp::kMin: return MPI_MIN;
  }
  throw Error("unknown ReduceOp");
}

RowDatatype::RowDatatype(RowType type) {
  const bool bytes = type.type == DataType::kBytes;
  const std::size_t n = bytes ? type.row_bytes : type.row_values;
  if (n == 1) {
    type_ = scalar_datatype(type.type);
    return;
  }
  EMBSCALE_EXPECTS(n <= MpiCommunicator::kIntLimit, "a row must hold fewer than 2^31 values");
  check_mpi(MPI_Type_contiguous(static_cast<int>(n), scalar_datatype(type.type), &type_), "MPI_Type_contiguous");
  check_mpi(MPI_Type_commit(&type_), "MPI_Type_commit");
  derived_ = true;
}

RowDatatype::~RowDatatype() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (derived_ && !finalized) MPI_Type_free(&type_);
}

MpiPending::~MpiPending() {
  if (!requests.empty() && std::uncaught_exceptions() == 0)
    MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
}

void MpiPending::wait() {
  if (requests.empty()) return;
  check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE),
            "MPI_Waitall");
  requests.clear();
}

bool MpiPending::test() {
  if (requests.empty()) return true;
  int done = 0;
  check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
            "MPI_Testall");
  if (done) requests.clear();
  return done != 0;
}

}  // namespace embscale::comm::detail
