// reduce_scatter: rank r ends with the reduction over all ranks of segment r of their inputs
// (equal segments: MPI_Reduce_scatter_block, as ncclReduceScatter).
// nccl-tests: count = elements per rank (size / type / ranks, rounded down), inputs of ranks *
// count; size = ranks * count elements; busbw factor (n-1)/n. In place (MPI's convention): the
// buffer holds all segments and the result replaces its first.
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

class ReduceScatter final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"reduce_scatter", true, false, true, true, bus_factor_ring};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int ranks) const override {
    return per_rank_layout(count, element_bytes, ranks);  // the in-place buffer holds every segment
  }
  std::size_t input_elements(const Layout& l, std::size_t, int, int) const override { return l.send_elements; }
  ExpectedElement expected(const Layout& l, std::size_t, std::size_t i, int rank, int, int) const override {
    if (i >= l.count) return {};
    return {ExpectedElement::Kind::kReduced, 0, {0, static_cast<std::size_t>(rank) * l.count + i}};
  }
  // NCCL's in place keeps the result at the rank's own segment of the input (MPI's at the first).
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    if (a.placement == Placement::kInPlace) {
      auto* base = static_cast<std::byte*>(a.recv);
      const std::size_t own = static_cast<std::size_t>(a.nccl->rank()) * a.layout->count * element_bytes(a.type);
      a.nccl->reduce_scatter(base, base + own, a.layout->count, a.type, a.op);
    } else {
      a.nccl->reduce_scatter(a.send, a.recv, a.layout->count, a.type, a.op);
    }
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->send_elements);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->count);
      const void* bare_in = a.placement == Placement::kInPlace ? MPI_IN_PLACE : a.send;
      const MPI_Datatype dt = bare_datatype(a.type);
      const MPI_Op op = bare_op(a.op);
      run_side(
          side, a, first, times, "MPI_Reduce_scatter_block",
          [&](std::size_t) { a.comm->reduce_scatter_block(in, out, a.op); },
          [&](std::size_t) { return a.comm->ireduce_scatter_block(in, out, a.op); },
          [&](std::size_t) { return MPI_Reduce_scatter_block(bare_in, a.recv, n, dt, op, a.bare); },
          [&](std::size_t, MPI_Request* r) {
            return MPI_Ireduce_scatter_block(bare_in, a.recv, n, dt, op, a.bare, r);
          });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_reduce_scatter() { return std::make_unique<ReduceScatter>(); }

}  // namespace embscale::collectives
