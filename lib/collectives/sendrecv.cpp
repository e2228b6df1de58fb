// sendrecv: a ring; every rank sends its input to the next rank and receives the previous one's.
// nccl-tests: count elements; busbw factor 1. Out of place only.
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

constexpr int kRingTag = 0;

class Sendrecv final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"sendrecv", false, false, true, false, bus_factor_one};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int) const override {
    return whole_layout(count, element_bytes);
  }
  std::size_t input_elements(const Layout& l, std::size_t, int, int) const override { return l.count; }
  ExpectedElement expected(const Layout&, std::size_t, std::size_t i, int rank, int ranks, int) const override {
    return {ExpectedElement::Kind::kMoved, (rank + ranks - 1) % ranks, {0, i}};
  }
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    const int ranks = a.nccl->size();
    const std::size_t bytes = a.layout->count * element_bytes(a.type);
    a.nccl->group_start();
    a.nccl->send(a.send, bytes, (a.nccl->rank() + 1) % ranks);
    a.nccl->recv(a.recv, bytes, (a.nccl->rank() + ranks - 1) % ranks);
    a.nccl->group_end();
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const int ranks = a.comm->size();
      const int next = (a.comm->rank() + 1) % ranks;
      const int previous = (a.comm->rank() + ranks - 1) % ranks;
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->count);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->count);
      const MPI_Datatype dt = bare_datatype(a.type);
      run_side(
          side, a, first, times, "MPI_Sendrecv",
          [&](std::size_t) { a.comm->sendrecv(in, next, kRingTag, out, previous, kRingTag); },
          [&](std::size_t) { return a.comm->isendrecv(in, next, kRingTag, out, previous, kRingTag); },
          [&](std::size_t) {
            return MPI_Sendrecv(a.send, n, dt, next, kRingTag, a.recv, n, dt, previous, kRingTag, a.bare,
                                MPI_STATUS_IGNORE);
          },
          [&](std::size_t, MPI_Request* r) {
            // MPI-3 has no MPI_Isendrecv: a receive and a send, waited together.
            const int rc = MPI_Irecv(a.recv, n, dt, previous, kRingTag, a.bare, &r[0]);
            return rc != MPI_SUCCESS ? rc : MPI_Isend(a.send, n, dt, next, kRingTag, a.bare, &r[1]);
          });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_sendrecv() { return std::make_unique<Sendrecv>(); }

}  // namespace embscale::collectives
