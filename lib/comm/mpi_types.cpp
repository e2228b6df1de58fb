#include "comm/mpi_types.hpp"

#include <algorithm>
#include <cstdint>
#include <exception>
#include <type_traits>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"

namespace embscale::comm::detail {

void throw_unknown(const char* what, int value) {
  throw Error(std::string("unknown ") + what + " " + std::to_string(value));
}

namespace {

template <class T> void divide(void* data, std::size_t values, int ranks) {
  T* v = static_cast<T*>(data);
  if constexpr (std::is_same_v<T, Half>) {
    for (std::size_t i = 0; i < values; ++i) v[i] = to_half(to_float(v[i]) / static_cast<float>(ranks));
  } else if constexpr (std::is_same_v<T, BFloat16>) {
    for (std::size_t i = 0; i < values; ++i) v[i] = to_bfloat16(to_float(v[i]) / static_cast<float>(ranks));
  } else if constexpr (std::is_integral_v<T>) {
    // In 64 bits, so that `ranks` itself never wraps in a narrow type; C++ truncates toward zero.
    using Wide = std::conditional_t<std::is_signed_v<T>, std::int64_t, std::uint64_t>;
    for (std::size_t i = 0; i < values; ++i) v[i] = static_cast<T>(static_cast<Wide>(v[i]) / static_cast<Wide>(ranks));
  } else {
    for (std::size_t i = 0; i < values; ++i) v[i] = v[i] / static_cast<T>(ranks);
  }
}

}  // namespace

void divide_for_average(void* data, std::size_t values, DataType type, int ranks) {
  switch (type) {
    case DataType::kInt8: return divide<std::int8_t>(data, values, ranks);
    case DataType::kUInt8: return divide<std::uint8_t>(data, values, ranks);
    case DataType::kInt32: return divide<std::int32_t>(data, values, ranks);
    case DataType::kUInt32: return divide<std::uint32_t>(data, values, ranks);
    case DataType::kInt64: return divide<std::int64_t>(data, values, ranks);
    case DataType::kUInt64: return divide<std::uint64_t>(data, values, ranks);
    case DataType::kFloat16: return divide<Half>(data, values, ranks);
    case DataType::kFloat32: return divide<float>(data, values, ranks);
    case DataType::kFloat64: return divide<double>(data, values, ranks);
    case DataType::kBFloat16: return divide<BFloat16>(data, values, ranks);
    case DataType::kBytes: break;
  }
  throw Error("divide_for_average: an average needs an arithmetic type");
}

void average_step_now_or_later(MpiPending* pending, void* data, std::size_t values, DataType type, int ranks) {
  if (!pending) {
    divide_for_average(data, values, type, ranks);
    return;
  }
  pending->on_complete = [=] { divide_for_average(data, values, type, ranks); };
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

void MpiPending::complete() {
  requests.clear();
  if (!on_complete) return;
  auto step = std::move(on_complete);
  on_complete = nullptr;
  step();
}

void MpiPending::wait() {
  if (!requests.empty())
    check_mpi(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE), "MPI_Waitall");
  complete();
}

bool MpiPending::test() {
  if (!requests.empty()) {
    int done = 0;
    check_mpi(MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE),
              "MPI_Testall");
    if (!done) return false;
  }
  complete();
  return true;
}

void post_chunked(MpiPending& p, bool is_send, void* base, std::size_t rows, std::size_t row_bytes, MPI_Datatype type,
                  int peer, MPI_Comm comm, std::size_t limit, int tag) {
  auto* bytes = static_cast<std::byte*>(base);
  for (std::size_t first = 0; first < rows; first += limit) {
    const int n = static_cast<int>(std::min(limit, rows - first));
    MPI_Request req;
    if (is_send) check_mpi(MPI_Isend(bytes + first * row_bytes, n, type, peer, tag, comm, &req), "MPI_Isend");
    else check_mpi(MPI_Irecv(bytes + first * row_bytes, n, type, peer, tag, comm, &req), "MPI_Irecv");
    p.requests.push_back(req);
  }
}

}  // namespace embscale::comm::detail
