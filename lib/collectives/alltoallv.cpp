// alltoallv: rank i sends send[j] elements to rank j, which stores them as its block i.
// Sized like alltoall (count = elements per peer for equal counts, size = what a rank sends per
// call in all); busbw factor (n-1)/n. Out of place only.
#include "collectives/alltoallv.hpp"

#include <algorithm>
#include <climits>
#include <cmath>
#include <numeric>

#include "collectives/bare_mpi.hpp"
#include "collectives/bare_nccl.hpp"
#include "collectives/collective_registry.hpp"
#include "collectives/element_type.hpp"

namespace embscale::collectives {
namespace {

std::vector<std::size_t> offsets_of(const std::vector<std::size_t>& counts) {
  std::vector<std::size_t> offsets(counts.size() + 1, 0);
  std::partial_sum(counts.begin(), counts.end(), offsets.begin() + 1);
  return offsets;
}

// MPI's int counts and displacements, or nothing when one does not fit an int.
bool int_layout(const std::vector<std::size_t>& counts, const std::vector<std::size_t>& offsets,
                std::vector<int>& out_counts, std::vector<int>& out_displs) {
  if (offsets.back() > static_cast<std::size_t>(INT_MAX)) return false;
  out_counts.assign(counts.begin(), counts.end());
  out_displs.assign(offsets.begin(), offsets.end() - 1);
  return true;
}

Layout::Counts counts_of(std::vector<std::size_t> send, std::vector<std::size_t> recv) {
  Layout::Counts c;
  c.send = std::move(send);
  c.recv = std::move(recv);
  c.send_offsets = offsets_of(c.send);
  c.recv_offsets = offsets_of(c.recv);
  if (!int_layout(c.send, c.send_offsets, c.send_int, c.send_displs) ||
      !int_layout(c.recv, c.recv_offsets, c.recv_int, c.recv_displs)) {
    c.send_int.clear();
    c.recv_int.clear();
  }
  return c;
}

// The block of `offsets` that element i falls in.
int block_of(const std::vector<std::size_t>& offsets, std::size_t i) {
  return static_cast<int>(std::upper_bound(offsets.begin(), offsets.end(), i) - offsets.begin()) - 1;
}

class Alltoallv : public CollectiveBench {
 public:
  const CollectiveTraits& traits() const override {
    static const CollectiveTraits t{"alltoallv", false, false, true, false, bus_factor_ring};
    return t;
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int ranks) const override {
    Layout l = per_rank_layout(count, element_bytes, ranks);
    const auto n = static_cast<std::size_t>(ranks);
    l.per_call.push_back(counts_of(std::vector<std::size_t>(n, l.count), std::vector<std::size_t>(n, l.count)));
    return l;
  }
  std::size_t input_elements(const Layout& l, std::size_t call, int, int) const override {
    return counts(l, call).send_offsets.back();
  }
  InputSlot input_slot(const Layout& l, std::size_t call, std::size_t i, int, int) const override {
    const auto& offsets = counts(l, call).send_offsets;
    const int to = block_of(offsets, i);
    return {to, i - offsets[static_cast<std::size_t>(to)]};
  }
  ExpectedElement expected(const Layout& l, std::size_t call, std::size_t i, int rank, int, int) const override {
    const auto& offsets = counts(l, call).recv_offsets;
    if (i >= offsets.back()) return {};
    const int from = block_of(offsets, i);
    return {ExpectedElement::Kind::kMoved, from, {rank, i - offsets[static_cast<std::size_t>(from)]}};
  }
  bool has_bare_mpi(const CallArgs& args) const override {
    for (const auto& c : args.layout->per_call)
      if (c.send_int.empty()) return false;
    return CollectiveBench::has_bare_mpi(args);
  }
  // NCCL has no alltoallv: grouped send/recv, as nccl-tests runs it.
  void enqueue_bare_nccl(const CallArgs& a, std::size_t call) const override {
    const auto& c = counts(*a.layout, call);
    a.nccl->exchange(a.send, c.send, c.send_offsets, a.recv, c.recv, c.recv_offsets, element_bytes(a.type));
  }
  void run(Side side, const CallArgs& a, std::size_t first, std::span<double> times) const override {
    visit_element_type(a.type, [&]<class T>(std::type_identity<T>) {
      const std::span<const T> in(static_cast<const T*>(a.send), a.layout->send_elements);
      const std::span<T> out(static_cast<T*>(a.recv), a.layout->recv_elements);
      const MPI_Datatype dt = bare_datatype(a.type);
      run_side(
          side, a, first, times, "MPI_Alltoallv",
          [&](std::size_t k) {
            const auto& c = counts(*a.layout, k);
            a.comm->alltoallv(in, std::span<const std::size_t>(c.send), out, std::span<const std::size_t>(c.recv));
          },
          [&](std::size_t k) {
            const auto& c = counts(*a.layout, k);
            return a.comm->ialltoallv(in, std::span<const std::size_t>(c.send), out,
                                      std::span<const std::size_t>(c.recv));
          },
          [&](std::size_t k) {
            const auto& c = counts(*a.layout, k);
            return MPI_Alltoallv(a.send, c.send_int.data(), c.send_displs.data(), dt, a.recv, c.recv_int.data(),
                                 c.recv_displs.data(), dt, a.bare);
          },
          [&](std::size_t k, MPI_Request* r) {
            const auto& c = counts(*a.layout, k);
            return MPI_Ialltoallv(a.send, c.send_int.data(), c.send_displs.data(), dt, a.recv, c.recv_int.data(),
                                  c.recv_displs.data(), dt, a.bare, r);
          });
    });
  }

 protected:
  static const Layout::Counts& counts(const Layout& l, std::size_t call) {
    return l.per_call[call % l.per_call.size()];
  }
};

class SkewedAlltoallv final : public Alltoallv {
 public:
  explicit SkewedAlltoallv(SkewedTraffic traffic) : traffic_(std::move(traffic)) {
    EMBSCALE_EXPECTS(!traffic_.calls.empty() && traffic_.mean_rows_per_rank > 0,
                     "skewed alltoallv needs captured calls that send rows");
  }
  Layout layout(std::size_t count, std::size_t element_bytes, int, int ranks) const override {
    const double per_row = std::max(1.0, std::round(static_cast<double>(count) / traffic_.mean_rows_per_rank));
    const auto k = static_cast<std::size_t>(per_row);
    Layout l;
    for (const auto& call : traffic_.calls) {
      std::vector<std::size_t> send(call.send_counts), recv(call.recv_counts);
      for (auto& c : send) c *= k;
      for (auto& c : recv) c *= k;
      l.per_call.push_back(counts_of(std::move(send), std::move(recv)));
      l.send_elements = std::max(l.send_elements, l.per_call.back().send_offsets.back());
      l.recv_elements = std::max(l.recv_elements, l.per_call.back().recv_offsets.back());
    }
    const double mean_elements = traffic_.mean_rows_per_rank * per_row;
    l.count = static_cast<std::size_t>(std::llround(mean_elements / ranks));
    l.size_bytes = mean_elements * static_cast<double>(element_bytes);
    return l;
  }

 private:
  SkewedTraffic traffic_;
};

}  // namespace

std::unique_ptr<CollectiveBench> make_alltoallv() { return std::make_unique<Alltoallv>(); }
std::unique_ptr<CollectiveBench> make_skewed_alltoallv(SkewedTraffic traffic) {
  return std::make_unique<SkewedAlltoallv>(std::move(traffic));
}

}  // namespace embscale::collectives
