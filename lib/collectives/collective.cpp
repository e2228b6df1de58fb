#include "collectives/collective.hpp"

#include "collectives/bare_mpi.hpp"

namespace embscale::collectives {

Layout whole_layout(std::size_t count, std::size_t element_bytes) {
  Layout l;
  l.count = l.send_elements = l.recv_elements = count;
  l.size_bytes = static_cast<double>(count * element_bytes);
  return l;
}

Layout per_rank_layout(std::size_t count, std::size_t element_bytes, int ranks) {
  Layout l;
  const auto n = static_cast<std::size_t>(ranks);
  l.count = count / n;
  l.send_elements = l.recv_elements = l.count * n;
  l.size_bytes = static_cast<double>(l.recv_elements * element_bytes);
  return l;
}

double bus_factor_one(int) { return 1.0; }
double bus_factor_ring(int ranks) { return (ranks - 1.0) / ranks; }
double bus_factor_allreduce(int ranks) { return 2.0 * (ranks - 1.0) / ranks; }

bool CollectiveBench::has_bare_mpi(const CallArgs& args) const {
  if (bare_datatype(args.type) == MPI_DATATYPE_NULL) return false;
  return !traits().reduces || bare_op(args.op) != MPI_OP_NULL;
}

std::string_view placement_name(Placement placement) {
  return placement == Placement::kInPlace ? "in_place" : "out_of_place";
}

}  // namespace embscale::collectives
