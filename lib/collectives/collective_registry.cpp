#include "collectives/collective_registry.hpp"

#include <string>

#include "core/error.hpp"

namespace embscale::collectives {

const std::vector<CollectiveEntry>& collectives() {
  static const std::vector<CollectiveEntry> registry{
      {"allreduce", make_allreduce}, {"allgather", make_allgather}, {"reduce_scatter", make_reduce_scatter},
      {"alltoall", make_alltoall},   {"bcast", make_bcast},         {"reduce", make_reduce},
      {"sendrecv", make_sendrecv},   {"alltoallv", make_alltoallv},
  };
  return registry;
}

const CollectiveEntry& find_collective(std::string_view name, std::string_view flag) {
  std::string known;
  for (const auto& entry : collectives()) {
    if (entry.name == name) return entry;
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
  }
  throw InputError(std::string(flag) + ": unknown collective \"" + std::string(name) + "\"; expected one of " + known +
                   " or all");
}

}  // namespace embscale::collectives
