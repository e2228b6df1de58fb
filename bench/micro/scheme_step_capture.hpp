// The collectives of one training step of a scheme, captured from the real engine: an
// EmbeddingEngine runs one step of the default config's batch over a forwarding Communicator
// (every call goes on to an MpiCommunicator), which writes down each collective of the step with
// its communicator, row type and this rank's counts. The exchange benchmark replays exactly these
// calls (all2all_exchange_bench.cpp), so its counts are the scheme's, never a re-derivation.
//
// Only what a scheme's step uses is captured: blocking alltoall, alltoallv, reduce_scatter,
// allgatherv and allreduce, on the layer's communicator and on communicators split from it.
// Anything else (a non-blocking call, bcast, gatherv, send/recv; a barrier during the step) throws
// an embscale::Error naming it, so a scheme that starts using one cannot be timed without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "comm/communicator.hpp"
#include "comm/mpi_communicator.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::bench {

enum class CollectiveOp { kAlltoall, kAlltoallv, kReduceScatter, kAllgatherv, kAllreduce };
const char* collective_name(CollectiveOp op) noexcept;

// One blocking collective as a scheme called it, on this rank. Counts are in rows of `type`, as
// the Communicator takes them.
struct CollectiveCall {
  CollectiveOp op = CollectiveOp::kAlltoall;
  int comm = 0;             // 0: the layer's communicator; i >= 1: SchemeStep::splits[i - 1]
  int rank = 0, ranks = 1;  // this rank in that communicator, and its size
  comm::RowType type;
  comm::ReduceOp reduce = comm::ReduceOp::kSum;  // reduce_scatter, allreduce
  std::size_t count = 0;                 // alltoall: rows to each rank; allgatherv: own rows; allreduce: rows
  std::vector<std::size_t> send_counts;  // alltoallv
  std::vector<std::size_t> recv_counts;  // alltoallv, reduce_scatter, allgatherv
  bool in_place = false;                 // allreduce with one buffer for send and receive

  std::size_t send_rows() const noexcept;  // rows the send buffer holds
  std::size_t recv_rows() const noexcept;  // rows the receive buffer holds
};

// A communicator a scheme split off during construction (table_row_wise: node and cross-node).
struct CommSplit {
  int parent = 0;  // as CollectiveCall::comm
  bool by_host = false;
  int color = 0, key = 0;  // split(color, key) unless by_host
};

struct SchemeStep {
  std::vector<CommSplit> splits;      // in the order the scheme made them
  std::vector<CollectiveCall> calls;  // in the order of the step (forward, then backward)
};

// The config a scheme is benchmarked on: the embedded default (bench/configs/default.json), its
// layer's type (and sharding) set to the scheme's. table_row_wise gets ranks_per_node = ranks / 2
// (two "nodes" on one host, so both its in-node reduce-scatter and its cross-node alltoallv move
// data; at 2 ranks a node is one rank and the reduce-scatter is a local copy).
config::Config scheme_config(const embedding::SchemeEntry& scheme, int ranks);

// Builds the engine of `config` on `world`, runs one step (forward, loss, backward) on this rank's
// share of iteration 0's batch and returns the collectives the step called. Collective over world.
SchemeStep capture_scheme_step(comm::MpiCommunicator& world, const config::Config& config);

// Values of a row's element type in one row (bytes for DataType::kBytes).
inline std::size_t elements_per_row(comm::RowType type) noexcept {
  return type.type == comm::DataType::kBytes ? type.row_bytes : type.row_values;
}

// Calls f(std::type_identity<T>{}) with the C++ element type of `type` (std::byte for kBytes).
template <class F>
void with_element_type(comm::DataType type, F&& f) {
  switch (type) {
    case comm::DataType::kBytes: f(std::type_identity<std::byte>{}); return;
    case comm::DataType::kInt32: f(std::type_identity<std::int32_t>{}); return;
    case comm::DataType::kInt64: f(std::type_identity<std::int64_t>{}); return;
    case comm::DataType::kUInt64: f(std::type_identity<std::uint64_t>{}); return;
    case comm::DataType::kFloat32: f(std::type_identity<float>{}); return;
    case comm::DataType::kFloat64: f(std::type_identity<double>{}); return;
  }
  throw Error("with_element_type: unknown DataType");
}

// Makes `call` on `comm` through the Communicator's typed front end, as the scheme did: `send`
// holds send_rows() rows, `recv` recv_rows() (one pointer for an in-place allreduce). Byte rows
// travel as std::byte rows of the same width (the same MPI datatype as the scheme's struct).
void invoke(const CollectiveCall& call, comm::Communicator& comm, const void* send, void* recv);

}  // namespace embscale::bench
