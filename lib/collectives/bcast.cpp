// bcast: the root's buffer is copied to every rank.
// nccl-tests: count elements; busbw factor 1. One buffer (MPI_Bcast and the Communicator's bcast
// have no separate receive buffer), so it runs in place only.
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

class Bcast final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"bcast", false, true, false, true, bus_factor_one};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int) const override {
    Layout l = whole_layout(count, element_bytes);
    l.send_elements = 0;  // one buffer
    return l;
  }
  std::size_t input_elements(const Layout& l, std::size_t, int rank, int root) const override {
    return rank == root ? l.count : 0;
  }
  ExpectedElement expected(const Layout&, std::size_t, std::size_t i, int, int, int root) const override {
    return {ExpectedElement::Kind::kMoved, root, {0, i}};
  }
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    a.nccl->broadcast(a.recv, a.layout->count, a.type, a.root);
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const std::span<T> data(static_cast<T*>(a.recv), a.layout->count);
      const MPI_Datatype dt = bare_datatype(a.type);
      run_side(
          side, a, first, times, "MPI_Bcast", [&](std::size_t) { a.comm->bcast(data, a.root); },
          [&](std::size_t) { return a.comm->ibcast(data, a.root); },
          [&](std::size_t) { return MPI_Bcast(a.recv, n, dt, a.root, a.bare); },
          [&](std::size_t, MPI_Request* r) { return MPI_Ibcast(a.recv, n, dt, a.root, a.bare, r); });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_bcast() { return std::make_unique<Bcast>(); }

}  // namespace embscale::collectives
