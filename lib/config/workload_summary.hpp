// A config's Data layer in the few values a report row carries: the largest bag, the key
// distribution every slot shares, the Zipf exponent every slot shares. What `run` writes as its
// parameters and `collectives` for its skewed counts.
#pragma once

#include <cstdint>
#include <string>

#include "config/config.hpp"

namespace embscale::config {

struct WorkloadSummary {
  std::int64_t max_nnz = 0;      // the largest bag size (a trace: the sparse max_nnz, 0 when not given)
  std::string key_distribution;  // shared by every slot, else "per_slot"; a trace: "trace"
  double zipf_alpha = 0.0;       // shared by every slot and Zipf, else 0
};

WorkloadSummary summarize_workload(const DataLayer& data);

}  // namespace embscale::config
