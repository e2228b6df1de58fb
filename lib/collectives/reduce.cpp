// reduce: the element-wise reduction of all ranks' inputs lands on the root.
// nccl-tests: count elements; busbw factor 1 (the root receives the whole result).
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

class Reduce final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"reduce", true, true, true, true, bus_factor_one};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int) const override {
    return whole_layout(count, element_bytes);
  }
  std::size_t input_elements(const Layout& l, std::size_t, int, int) const override { return l.count; }
  ExpectedElement expected(const Layout&, std::size_t, std::size_t i, int rank, int, int root) const override {
    if (rank != root) return {};
    return {ExpectedElement::Kind::kReduced, 0, {0, i}};
  }
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    a.nccl->reduce(a.send, a.recv, a.layout->count, a.type, a.op, a.root);
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->count);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->count);
      // MPI: MPI_IN_PLACE is the root's send buffer only; other ranks send their own input.
      const bool root = a.comm->rank() == a.root;
      const void* bare_in = a.placement == Placement::kInPlace && root ? MPI_IN_PLACE : a.send;
      const MPI_Datatype dt = bare_datatype(a.type);
      const MPI_Op op = bare_op(a.op);
      run_side(
          side, a, first, times, "MPI_Reduce", [&](std::size_t) { a.comm->reduce(in, out, a.op, a.root); },
          [&](std::size_t) { return a.comm->ireduce(in, out, a.op, a.root); },
          [&](std::size_t) { return MPI_Reduce(bare_in, a.recv, n, dt, op, a.root, a.bare); },
          [&](std::size_t, MPI_Request* r) { return MPI_Ireduce(bare_in, a.recv, n, dt, op, a.root, a.bare, r); });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_reduce() { return std::make_unique<Reduce>(); }

}  // namespace embscale::collectives
