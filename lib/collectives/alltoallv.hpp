// alltoallv, with equal counts (OSU's osu_alltoallv; the registry's "alltoallv") and with the
// skewed counts of an embedding layer's key exchange (make_skewed_alltoallv).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collectives/collective.hpp"

namespace embscale::collectives {

// Rows a rank sends to and receives from each rank in one call of a scheme's exchange.
struct ExchangeRows {
  std::vector<std::size_t> send, recv;
};

// The key exchange of a config's first embedding layer, iteration by iteration, on this rank
// (scheme_traffic.hpp captures it from the real engine).
struct SkewedTraffic {
  std::string scheme;               // the scheme whose exchange it is (its report name)
  std::size_t row_bytes = 0;        // bytes of one row as the scheme sends it (8: a key; 16: key, bag)
  std::vector<ExchangeRows> calls;  // one per captured iteration
  double mean_rows_per_rank = 0;    // rows a rank sends per call, averaged over ranks and calls
};

// Skewed counts scaled to a size: a row becomes k = max(1, round(count / mean rows)) elements,
// so that the mean bytes a rank sends per call match nccl-tests' size of equal counts (sizes below
// one element per row collapse to k = 1). Call k of the timed loop uses captured iteration
// k % calls.size().
std::unique_ptr<CollectiveBench> make_skewed_alltoallv(SkewedTraffic traffic);

}  // namespace embscale::collectives
