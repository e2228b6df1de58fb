// One collective of `embscale collectives`: how nccl-tests sizes it, what its result must hold, and
// the same call made twice over, through comm::Communicator and as the bare MPI call.
//
// A new collective is one file in lib/collectives/ (a class implementing CollectiveBench) plus one
// line in collective_registry.cpp. The driver (benchmark_run.cpp) owns buffers, timing, checks
// and results; a collective only says how big its buffers are, where each result element comes
// from, and makes its call.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "collectives/data_check.hpp"
#include "comm/communicator.hpp"

namespace embscale::collectives {

enum class Placement { kOutOfPlace, kInPlace };
std::string_view placement_name(Placement placement);

// What the collective is, for the table, the report and the bus-bandwidth factor.
struct CollectiveTraits {
  std::string_view name;  // "allreduce", ... (the report's `collective`)
  bool reduces = false;   // takes --op
  bool rooted = false;    // takes -r
  bool out_of_place = true;
  bool in_place = true;
  // nccl-tests' bus bandwidth factor (PERFORMANCE.md): busbw = algbw * factor(ranks).
  double (*bus_factor)(int ranks) = nullptr;
};

// The buffers of one call on this rank, in elements of the call's type. For alltoallv the counts
// may change from call to call (skewed traffic): call k uses per_call[k % per_call.size()].
struct Layout {
  std::size_t count = 0;          // nccl-tests' count column (elements per rank, or per peer)
  std::size_t send_elements = 0;  // out-of-place send buffer (largest over calls)
  std::size_t recv_elements = 0;  // receive buffer (largest over calls)
  double size_bytes = 0;          // nccl-tests' size column: the bytes algbw divides by time
  struct Counts {
    std::vector<std::size_t> send, recv;                  // elements to and from each rank
    std::vector<std::size_t> send_offsets, recv_offsets;  // prefix sums (ranks + 1 entries)
    // The same as MPI's ints for the bare call; empty when some count or offset exceeds INT_MAX
    // (then bare MPI cannot make the call in one piece and is not measured).
    std::vector<int> send_int, send_displs, recv_int, recv_displs;
  };
  std::vector<Counts> per_call;  // alltoallv only
};

class BareNccl;  // bare_nccl.hpp

// Everything one call needs; `send` already points into `recv` for an in-place call. With
// --backend nccl, `comm` is an NcclCommunicator, the buffers are device memory and `nccl` makes
// the bare calls (`bare` then serves only the barriers).
struct CallArgs {
  comm::Communicator* comm = nullptr;
  MPI_Comm bare = MPI_COMM_NULL;  // a duplicate of the Communicator's MPI communicator
  comm::DataType type = comm::DataType::kFloat32;
  comm::ReduceOp op = comm::ReduceOp::kSum;
  int root = 0;
  Placement placement = Placement::kOutOfPlace;
  bool blocking = true;
  bool barrier_each_call = false;  // OSU's timing: an untimed barrier after every call
  const Layout* layout = nullptr;
  const void* send = nullptr;
  void* recv = nullptr;
  const BareNccl* nccl = nullptr;
};

enum class Side { kEmbscale, kBareMpi, kBareNccl };

// The layouts nccl-tests gives the collectives, from a size's element count:
// * whole: the count in and out (allreduce, reduce, bcast, sendrecv); size = count elements;
// * per rank: count / ranks (rounded down) per rank or peer, ranks times that in and out
//   (alltoall, alltoallv, reduce_scatter; allgather sends one rank's share); size = all of it.
Layout whole_layout(std::size_t count, std::size_t element_bytes);
Layout per_rank_layout(std::size_t count, std::size_t element_bytes, int ranks);

// nccl-tests' bus factors: 1 (bcast, reduce, sendrecv), (n-1)/n (reduce_scatter, allgather,
// alltoall, alltoallv), 2(n-1)/n (allreduce).
double bus_factor_one(int ranks);
double bus_factor_ring(int ranks);
double bus_factor_allreduce(int ranks);

class CollectiveBench {
 public:
  virtual ~CollectiveBench() = default;
  virtual const CollectiveTraits& traits() const = 0;

  // The layout of a call of `count` elements (nccl-tests: size / type size) on `ranks` ranks.
  virtual Layout layout(std::size_t count, std::size_t element_bytes, int rank, int ranks) const = 0;
  // In place: where this rank's input starts inside the receive buffer (elements).
  virtual std::size_t in_place_offset(const Layout& layout, int rank, int ranks) const {
    (void)layout, (void)rank, (void)ranks;
    return 0;
  }
  // The input elements this rank provides (out of place: the whole send buffer), and the slot of
  // input element i; for call `call` of the layout.
  virtual std::size_t input_elements(const Layout& layout, std::size_t call, int rank, int root) const = 0;
  virtual InputSlot input_slot(const Layout& layout, std::size_t call, std::size_t i, int rank, int ranks) const {
    (void)layout, (void)call, (void)rank, (void)ranks;
    return {0, i};
  }
  // What receive element i must hold after call `call` (elements beyond the result: kUnchecked).
  virtual ExpectedElement expected(const Layout& layout, std::size_t call, std::size_t i, int rank, int ranks,
                                   int root) const = 0;

  // Whether bare MPI has this call for `args` (MPI has no average and no 16-bit float types).
  virtual bool has_bare_mpi(const CallArgs& args) const;
  // Runs calls [first, first + times.size()) of the layout, timing each into times[k] (seconds),
  // through the Communicator (kEmbscale) or as bare MPI (kBareMpi).
  virtual void run(Side side, const CallArgs& args, std::size_t first, std::span<double> times) const = 0;
  // Enqueues call `call` of the layout as bare NCCL (args.nccl) on its stream; run_bare_nccl
  // (bare_nccl.hpp) times it.
  virtual void enqueue_bare_nccl(const CallArgs& args, std::size_t call) const = 0;
};

}  // namespace embscale::collectives
