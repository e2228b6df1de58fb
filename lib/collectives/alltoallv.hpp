// alltoallv, with equal counts (OSU's osu_alltoallv; the registry's "alltoallv") and with the
// skewed counts of an embedding layer's key exchange (make_skewed_alltoallv).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collectives/collective.hpp"
#include "collectives/scheme_traffic.hpp"

namespace embscale::collectives {

// The key exchange of a config's first embedding layer, iteration by iteration, on this rank
// (scheme_traffic.hpp captures it from the real engine).
struct SkewedTraffic {
  std::string scheme;                    // the scheme whose exchange it is (its report name)
  std::vector<KeyExchangeCounts> calls;  // one per captured iteration (rows, as the scheme sends them)
  double mean_rows_per_rank = 0;         // rows a rank sends per call, averaged over ranks and calls
};

// Skewed counts scaled to a size: a row becomes k = max(1, round(count / mean rows)) elements,
// so that the mean bytes a rank sends per call match nccl-tests' size of equal counts (sizes below
// one element per row collapse to k = 1). Call k of the timed loop uses captured iteration
// k % calls.size().
std::unique_ptr<CollectiveBench> make_skewed_alltoallv(SkewedTraffic traffic);

}  // namespace embscale::collectives
