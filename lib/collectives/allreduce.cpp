// allreduce: every rank ends with the element-wise reduction of all ranks' inputs.
// nccl-tests: count elements in and out; busbw factor 2(n-1)/n (a ring's reduce-scatter then
// all-gather, each moving (n-1)/n of the data).
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

class Allreduce final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"allreduce", true, false, true, true, bus_factor_allreduce};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int) const override {
    return whole_layout(count, element_bytes);
  }
  std::size_t input_elements(const Layout& l, std::size_t, int, int) const override { return l.count; }
  ExpectedElement expected(const Layout&, std::size_t, std::size_t i, int, int, int) const override {
    return {ExpectedElement::Kind::kReduced, 0, {0, i}};
  }
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    a.nccl->all_reduce(a.send, a.recv, a.layout->count, a.type, a.op);
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->count);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->count);
      const void* bare_in = a.placement == Placement::kInPlace ? MPI_IN_PLACE : a.send;
      const MPI_Datatype dt = bare_datatype(a.type);
      const MPI_Op op = bare_op(a.op);
      run_side(
          side, a, first, times, "MPI_Allreduce", [&](std::size_t) { a.comm->allreduce(in, out, a.op); },
          [&](std::size_t) { return a.comm->iallreduce(in, out, a.op); },
          [&](std::size_t) { return MPI_Allreduce(bare_in, a.recv, n, dt, op, a.bare); },
          [&](std::size_t, MPI_Request* r) { return MPI_Iallreduce(bare_in, a.recv, n, dt, op, a.bare, r); });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_allreduce() { return std::make_unique<Allreduce>(); }

}  // namespace embscale::collectives
