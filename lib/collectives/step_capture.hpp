// The collectives of a scheme's training steps, captured from the real engine: an EmbeddingEngine
// runs steps of a config's batches over a forwarding Communicator (every call goes on to the
// world's), which writes down each collective of a step with its communicator, row type and this
// rank's counts. Whoever needs a scheme's traffic reads it here, never re-derives it: `embscale
// collectives --replay` replays these calls (scheme_replay.hpp) and takes its skewed alltoallv
// counts from them (scheme_traffic.hpp).
//
// Only what a scheme's step uses is captured: blocking alltoall, alltoallv, reduce_scatter,
// allgatherv and allreduce, on the layer's communicator and on communicators split from it.
// Anything else (a non-blocking call, bcast, gatherv, allgather, reduce, reduce_scatter_block,
// send/recv, sendrecv; a barrier during a step) throws an embscale::Error naming it, so a scheme
// that starts using one cannot be measured without it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/error.hpp"
#include "core/half_float.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::collectives {

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
  std::size_t count = 0;                         // alltoall: rows to each rank; allgatherv: own rows; allreduce: rows
  std::vector<std::size_t> send_counts;          // alltoallv
  std::vector<std::size_t> recv_counts;          // alltoallv, reduce_scatter, allgatherv
  bool in_place = false;                         // allreduce with one buffer for send and receive

  std::size_t send_rows() const noexcept;  // rows the send buffer holds
  std::size_t recv_rows() const noexcept;  // rows the receive buffer holds
};

// A communicator a scheme split off during construction (table_row_wise: node and cross-node).
struct CommSplit {
  int parent = 0;  // as CollectiveCall::comm
  bool by_host = false;
  int color = 0, key = 0;  // split(color, key) unless by_host
};

// One step's collectives. The splits are made once, when the engine is built, so every step of
// one capture has the same list.
struct SchemeStep {
  std::vector<CommSplit> splits;      // in the order the scheme made them
  std::vector<CollectiveCall> calls;  // in the order of the step (forward, then backward)
};

// Sets `layer` to run the registry's scheme `name` (its report name, as `--scheme` takes it): a
// scheme with its own config type gets that type (HugeCTR's and SOK's), TorchRec's become a
// ShardedEmbedding with that sharding. ranks_per_node, which only table_row_wise reads (the engine
// refuses it elsewhere), is cleared for the others and kept for table_row_wise (0: the run's
// hosts). InputError naming the known schemes when `name` is none of them.
void set_layer_scheme(config::EmbeddingLayer& layer, const std::string& name);

// The config a scheme is benchmarked on: the embedded default (bench/configs/default.json), its
// layer set to the scheme (set_layer_scheme). table_row_wise gets ranks_per_node = ranks / 2
// (two "nodes" on one host, so both its in-node reduce-scatter and its cross-node alltoallv move
// data; at 2 ranks a node is one rank and the reduce-scatter is a local copy).
config::Config scheme_config(const embedding::SchemeEntry& scheme, int ranks);

// Builds the engine of `config` on `world` (the batch resolved for world's ranks,
// config::resolve_batch_for_ranks), then runs one step (forward, loss, backward) on this rank's
// share of each iteration's batch, iterations [first, first + iterations) in order, all on one
// engine (the tables carry over, as in a run). Returns one SchemeStep per iteration. Collective
// over world; every rank must pass the same config and range. A trace's range must lie within the
// config's run, [-solver.warmup_iter, solver.max_iter) (InputError naming solver.max_iter).
std::vector<SchemeStep> capture_scheme_steps(comm::Communicator& world, config::Config config, std::int64_t first,
                                             std::int64_t iterations);
// The step of iteration 0 alone.
SchemeStep capture_scheme_step(comm::Communicator& world, const config::Config& config);

// Values of a row's element type in one row (bytes for DataType::kBytes).
inline std::size_t elements_per_row(comm::RowType type) noexcept {
  return type.type == comm::DataType::kBytes ? type.row_bytes : type.row_values;
}

// Calls f(std::type_identity<T>{}) with the C++ element type of `type` (std::byte for kBytes).
template <class F> void with_element_type(comm::DataType type, F&& f) {
  switch (type) {
    case comm::DataType::kBytes: f(std::type_identity<std::byte>{}); return;
    case comm::DataType::kInt32: f(std::type_identity<std::int32_t>{}); return;
    case comm::DataType::kInt64: f(std::type_identity<std::int64_t>{}); return;
    case comm::DataType::kUInt64: f(std::type_identity<std::uint64_t>{}); return;
    case comm::DataType::kFloat32: f(std::type_identity<float>{}); return;
    case comm::DataType::kFloat64: f(std::type_identity<double>{}); return;
    case comm::DataType::kInt8: f(std::type_identity<std::int8_t>{}); return;
    case comm::DataType::kUInt8: f(std::type_identity<std::uint8_t>{}); return;
    case comm::DataType::kUInt32: f(std::type_identity<std::uint32_t>{}); return;
    case comm::DataType::kFloat16: f(std::type_identity<Half>{}); return;
    case comm::DataType::kBFloat16: f(std::type_identity<BFloat16>{}); return;
  }
  throw Error("with_element_type: unknown DataType");
}

// Makes `call` on `comm` through the Communicator's typed front end, as the scheme did: `send`
// holds send_rows() rows, `recv` recv_rows() (one pointer for an in-place allreduce). Byte rows
// travel as std::byte rows of the same width (the same MPI datatype as the scheme's struct).
void invoke(const CollectiveCall& call, comm::Communicator& comm, const void* send, void* recv);

}  // namespace embscale::collectives
