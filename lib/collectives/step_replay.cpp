#include "collectives/step_replay.hpp"

#include <algorithm>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>

#include "collectives/bare_mpi.hpp"
#include "core/error.hpp"

namespace embscale::collectives {
namespace {

// The bare MPI datatype and op of a replayed call (lib/collectives' mapping), refusing what bare
// MPI has no equivalent of (16-bit floats, average): no scheme step sends them.
MPI_Datatype element_datatype(comm::DataType type) {
  const MPI_Datatype datatype = bare_datatype(type);
  if (datatype == MPI_DATATYPE_NULL) throw Error("bare replay: MPI has no datatype for this DataType");
  return datatype;
}

MPI_Op mpi_op(comm::ReduceOp op) {
  const MPI_Op mpi = bare_op(op);
  if (mpi == MPI_OP_NULL) throw Error("bare replay: MPI has no operation for this ReduceOp");
  return mpi;
}

// Rows -> elements as MPI's int, refusing what the bare form cannot express in one call.
int elements(std::size_t rows, std::size_t per_row) {
  const std::size_t n = rows * per_row;
  if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
    throw Error("bare replay: " + std::to_string(n) + " elements exceed an MPI int count");
  return static_cast<int>(n);
}

void int_layout(const std::vector<std::size_t>& rows, std::size_t per_row, std::vector<int>& counts,
                std::vector<int>& displs) {
  counts.resize(rows.size());
  displs.resize(rows.size());
  std::size_t at = 0;
  for (std::size_t r = 0; r < rows.size(); ++r) {
    counts[r] = elements(rows[r], per_row);
    displs[r] = elements(at, per_row);
    at += rows[r];
  }
}

std::size_t words(std::size_t rows, comm::RowType type) { return (rows * type.row_bytes + 7) / 8; }

}  // namespace

ReplayedStep::ReplayedStep(SchemeStep step, comm::MpiCommunicator& world) : world_(world) {
  embscale_comms_.push_back(&world);
  bare_comms_.push_back(world.mpi_comm());
  for (const CommSplit& s : step.splits) {
    const auto parent = static_cast<std::size_t>(s.parent);
    owned_splits_.push_back(s.by_host ? embscale_comms_[parent]->split_by_host()
                                      : embscale_comms_[parent]->split(s.color, s.key));
    embscale_comms_.push_back(owned_splits_.back().get());
    MPI_Comm bare = MPI_COMM_NULL;
    if (s.by_host)
      check_bare(MPI_Comm_split_type(bare_comms_[parent], MPI_COMM_TYPE_SHARED, world.rank(), MPI_INFO_NULL, &bare),
                 "MPI_Comm_split_type");
    else check_bare(MPI_Comm_split(bare_comms_[parent], s.color, s.key, &bare), "MPI_Comm_split");
    bare_comms_.push_back(bare);
  }
  for (CollectiveCall& captured : step.calls) {
    Call c;
    c.call = std::move(captured);
    const CollectiveCall& k = c.call;
    const std::size_t per_row = elements_per_row(k.type);
    c.element = element_datatype(k.type.type);
    if (!k.in_place) c.send.assign(words(k.send_rows(), k.type), 0);
    c.recv.assign(words(k.recv_rows(), k.type), 0);
    switch (k.op) {
      case CollectiveOp::kAlltoall:
      case CollectiveOp::kAllreduce: c.send_counts = {elements(k.count, per_row)}; break;
      case CollectiveOp::kAlltoallv:
        int_layout(k.send_counts, per_row, c.send_counts, c.send_displs);
        int_layout(k.recv_counts, per_row, c.recv_counts, c.recv_displs);
        break;
      case CollectiveOp::kReduceScatter: int_layout(k.recv_counts, per_row, c.recv_counts, c.recv_displs); break;
      case CollectiveOp::kAllgatherv:
        c.send_counts = {elements(k.count, per_row)};
        int_layout(k.recv_counts, per_row, c.recv_counts, c.recv_displs);
        break;
    }
    calls_.push_back(std::move(c));
  }
}

ReplayedStep::~ReplayedStep() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (std::size_t i = 1; i < bare_comms_.size(); ++i) MPI_Comm_free(&bare_comms_[i]);
}

void ReplayedStep::run_embscale(std::size_t k) {
  Call& c = calls_[k];
  invoke(c.call, *embscale_comms_[static_cast<std::size_t>(c.call.comm)], c.send_ptr(), c.recv_ptr());
}

void ReplayedStep::run_bare(std::size_t k) {
  Call& c = calls_[k];
  const MPI_Comm comm = bare_comms_[static_cast<std::size_t>(c.call.comm)];
  const void* send = c.send_ptr();
  void* recv = c.recv_ptr();
  switch (c.call.op) {
    case CollectiveOp::kAlltoall:
      check_bare(MPI_Alltoall(send, c.send_counts[0], c.element, recv, c.send_counts[0], c.element, comm),
                 "MPI_Alltoall");
      return;
    case CollectiveOp::kAlltoallv:
      check_bare(MPI_Alltoallv(send, c.send_counts.data(), c.send_displs.data(), c.element, recv, c.recv_counts.data(),
                               c.recv_displs.data(), c.element, comm),
                 "MPI_Alltoallv");
      return;
    case CollectiveOp::kReduceScatter:
      check_bare(MPI_Reduce_scatter(send, recv, c.recv_counts.data(), c.element, mpi_op(c.call.reduce), comm),
                 "MPI_Reduce_scatter");
      return;
    case CollectiveOp::kAllgatherv:
      check_bare(MPI_Allgatherv(send, c.send_counts[0], c.element, recv, c.recv_counts.data(), c.recv_displs.data(),
                                c.element, comm),
                 "MPI_Allgatherv");
      return;
    case CollectiveOp::kAllreduce:
      check_bare(MPI_Allreduce(c.call.in_place ? MPI_IN_PLACE : send, recv, c.send_counts[0], c.element,
                               mpi_op(c.call.reduce), comm),
                 "MPI_Allreduce");
      return;
  }
}

void ReplayedStep::fill_pattern(Call& c, int world_rank) {
  auto& buffer = c.call.in_place ? c.recv : c.send;
  const std::size_t rows = c.call.send_rows();
  with_element_type(c.call.type.type, [&]<class T>(std::type_identity<T>) {
    const std::span<T> values(reinterpret_cast<T*>(buffer.data()), rows * elements_per_row(c.call.type));
    for (std::size_t i = 0; i < values.size(); ++i) {
      const std::size_t v = (static_cast<std::size_t>(world_rank) * 7 + i) % 13;
      if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>)
        values[i] = T{static_cast<std::uint16_t>(v)};  // a bit pattern: the check compares bytes
      else values[i] = static_cast<T>(v);
    }
  });
}

std::string ReplayedStep::check() {
  std::string failure;
  for (std::size_t k = 0; k < calls_.size(); ++k) {
    Call& c = calls_[k];
    comm::Communicator& comm = *embscale_comms_[static_cast<std::size_t>(c.call.comm)];
    const auto prepare = [&] {  // an in-place call's input is its receive buffer
      std::fill(c.recv.begin(), c.recv.end(), 0);
      fill_pattern(c, world_.rank());
    };
    prepare();
    run_bare(k);
    const std::vector<std::uint64_t> expected = c.recv;
    prepare();
    comm.stats().reset();
    run_embscale(k);
    c.bytes_sent = comm.stats().total().bytes_sent;
    const std::size_t bytes = c.call.recv_rows() * c.call.type.row_bytes;
    if (failure.empty() && std::memcmp(expected.data(), c.recv.data(), bytes) != 0)
      failure = "call " + std::to_string(k) + " (" + collective_name(c.call.op) +
                ") received other bytes through embscale than through bare MPI";
    std::fill(c.send.begin(), c.send.end(), 0);
    std::fill(c.recv.begin(), c.recv.end(), 0);
  }
  return failure;
}

}  // namespace embscale::collectives
