// Every collective `embscale collectives` measures, in the order it runs them (nccl-tests' binaries:
// all_reduce, all_gather, reduce_scatter, alltoall, broadcast, reduce, sendrecv; then OSU's
// alltoallv). A new collective: a file defining its CollectiveBench and its make_ function
// (declared below), and one entry in collectives() (collective_registry.cpp).
#pragma once

#include <memory>
#include <string_view>
#include <vector>

#include "collectives/collective.hpp"

namespace embscale::collectives {

struct CollectiveEntry {
  std::string_view name;
  std::unique_ptr<CollectiveBench> (*make)();
};

const std::vector<CollectiveEntry>& collectives();
// Throws InputError naming `flag` and the known names when `name` is none of them.
const CollectiveEntry& find_collective(std::string_view name, std::string_view flag);

std::unique_ptr<CollectiveBench> make_allreduce();
std::unique_ptr<CollectiveBench> make_allgather();
std::unique_ptr<CollectiveBench> make_reduce_scatter();
std::unique_ptr<CollectiveBench> make_alltoall();
std::unique_ptr<CollectiveBench> make_bcast();
std::unique_ptr<CollectiveBench> make_reduce();
std::unique_ptr<CollectiveBench> make_sendrecv();
std::unique_ptr<CollectiveBench> make_alltoallv();  // equal counts (alltoallv.hpp: skewed)

}  // namespace embscale::collectives
