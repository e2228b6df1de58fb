#include "collectives/bare_mpi.hpp"

#include <string>

#include "core/error.hpp"

namespace embscale::collectives {

BareCommunicator::BareCommunicator(const comm::Communicator& comm) {
  const comm::NativeHandle native = comm.native_handle();
  EMBSCALE_EXPECTS(native.kind == "mpi", "bare MPI needs a Communicator over MPI");
  check_bare(MPI_Comm_dup(*static_cast<const MPI_Comm*>(native.handle), &comm_), "MPI_Comm_dup");
}

BareCommunicator::~BareCommunicator() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized && comm_ != MPI_COMM_NULL) MPI_Comm_free(&comm_);
}

MPI_Datatype bare_datatype(comm::DataType type) {
  using comm::DataType;
  switch (type) {
    case DataType::kInt8: return MPI_INT8_T;
    case DataType::kUInt8: return MPI_UINT8_T;
    case DataType::kInt32: return MPI_INT32_T;
    case DataType::kUInt32: return MPI_UINT32_T;
    case DataType::kInt64: return MPI_INT64_T;
    case DataType::kUInt64: return MPI_UINT64_T;
    case DataType::kFloat32: return MPI_FLOAT;
    case DataType::kFloat64: return MPI_DOUBLE;
    case DataType::kBytes: return MPI_BYTE;
    case DataType::kFloat16:
    case DataType::kBFloat16: return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

MPI_Op bare_op(comm::ReduceOp op) {
  switch (op) {
    case comm::ReduceOp::kSum: return MPI_SUM;
    case comm::ReduceOp::kProd: return MPI_PROD;
    case comm::ReduceOp::kMax: return MPI_MAX;
    case comm::ReduceOp::kMin: return MPI_MIN;
    case comm::ReduceOp::kAvg: return MPI_OP_NULL;
  }
  return MPI_OP_NULL;
}

void check_bare(int rc, const char* call) {
  if (rc != MPI_SUCCESS) throw Error(std::string("bare ") + call + " failed with MPI error " + std::to_string(rc));
}

}  // namespace embscale::collectives
