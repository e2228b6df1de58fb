// allgather: every rank ends with every rank's input, in rank order.
// nccl-tests: count = elements per rank (size / type / ranks, rounded down); size = ranks *
// count elements; busbw factor (n-1)/n. In place: the input is this rank's segment of the output.
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

class Allgather final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"allgather", false, false, true, true, bus_factor_ring};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int ranks) const override {
    Layout l = per_rank_layout(count, element_bytes, ranks);
    l.send_elements = l.count;  // one rank's share
    return l;
  }
  std::size_t in_place_offset(const Layout& l, int rank, int) const override {
    return static_cast<std::size_t>(rank) * l.count;
  }
  std::size_t input_elements(const Layout& l, std::size_t, int, int) const override { return l.count; }
  ExpectedElement expected(const Layout& l, std::size_t, std::size_t i, int, int, int) const override {
    if (l.count == 0) return {};
    return {ExpectedElement::Kind::kMoved, static_cast<int>(i / l.count), {0, i % l.count}};
  }
  // In place, the input is the rank's own segment of the output: NCCL's in place too.
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    a.nccl->all_gather(a.send, a.recv, a.layout->count, a.type);
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->count);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->recv_elements);
      const void* bare_in = a.placement == Placement::kInPlace ? MPI_IN_PLACE : a.send;
      const MPI_Datatype dt = bare_datatype(a.type);
      run_side(
          side, a, first, times, "MPI_Allgather", [&](std::size_t) { a.comm->allgather(in, out); },
          [&](std::size_t) { return a.comm->iallgather(in, out); },
          [&](std::size_t) { return MPI_Allgather(bare_in, n, dt, a.recv, n, dt, a.bare); },
          [&](std::size_t, MPI_Request* r) { return MPI_Iallgather(bare_in, n, dt, a.recv, n, dt, a.bare, r); });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_allgather() { return std::make_unique<Allgather>(); }

}  // namespace embscale::collectives
