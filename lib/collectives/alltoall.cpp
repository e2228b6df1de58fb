// alltoall: block j of rank i's input goes to rank j, which stores it as its block i.
// nccl-tests: count = elements per peer (size / type / ranks, rounded down); size = ranks *
// count elements; busbw factor (n-1)/n. Out of place only (as ncclAlltoAll).
#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

class Alltoall final : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"alltoall", false, false, true, false, bus_factor_ring};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int ranks) const override {
    return per_rank_layout(count, element_bytes, ranks);
  }
  std::size_t input_elements(const Layout& l, std::size_t, int, int) const override { return l.send_elements; }
  InputSlot input_slot(const Layout& l, std::size_t, std::size_t i, int, int) const override {
    return {static_cast<int>(i / l.count), i % l.count};
  }
  ExpectedElement expected(const Layout& l, std::size_t, std::size_t i, int rank, int, int) const override {
    if (l.count == 0) return {};
    return {ExpectedElement::Kind::kMoved, static_cast<int>(i / l.count), {rank, i % l.count}};
  }
  // NCCL has no alltoall: grouped send/recv, as nccl-tests runs it.
  void enqueue_bare_nccl(const CallArgs& a, std::size_t) const override {
    const auto ranks = static_cast<std::size_t>(a.nccl->size());
    std::vector<std::size_t> counts(ranks, a.layout->count), offsets(ranks);
    for (std::size_t r = 0; r < ranks; ++r) offsets[r] = r * a.layout->count;
    a.nccl->exchange(a.send, counts, offsets, a.recv, counts, offsets, element_bytes(a.type));
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const int n = static_cast<int>(a.layout->count);
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->send_elements);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->recv_elements);
      const MPI_Datatype dt = bare_datatype(a.type);
      run_side(
          side, a, first, times, "MPI_Alltoall", [&](std::size_t) { a.comm->alltoall(in, out, a.layout->count); },
          [&](std::size_t) { return a.comm->ialltoall(in, out, a.layout->count); },
          [&](std::size_t) { return MPI_Alltoall(a.send, n, dt, a.recv, n, dt, a.bare); },
          [&](std::size_t, MPI_Request* r) { return MPI_Ialltoall(a.send, n, dt, a.recv, n, dt, a.bare, r); });
    });
  }
};

}  // namespace

std::unique_ptr<CollectiveBench> make_alltoall() { return std::make_unique<Alltoall>(); }

}  // namespace embscale::collectives
