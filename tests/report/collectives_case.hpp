// The parameters of one case of an `embscale collectives` report (results/schema.md,
// "Collectives reports"): a float sum allreduce of `size_bytes`, out of place and blocking, on
// `ranks` ranks over `iterations` calls; what the tests that write or compare such reports use.
#pragma once

#include <cstdint>
#include <vector>

#include "report/summary.hpp"

namespace embscale::report::testing {

inline std::vector<SummaryField> allreduce_case_parameters(std::int64_t size_bytes, int ranks,
                                                           std::int64_t iterations) {
  return {{"collective", std::string("allreduce")},
          {"counts", std::string("equal")},
          {"type", std::string("float")},
          {"redop", std::string("sum")},
          {"root", std::int64_t{-1}},
          {"placement", std::string("out_of_place")},
          {"blocking", std::int64_t{1}},
          {"size_bytes", size_bytes},
          {"count", size_bytes / 4},
          {"ranks", std::int64_t{ranks}},
          {"iterations", iterations}};
}

}  // namespace embscale::report::testing
