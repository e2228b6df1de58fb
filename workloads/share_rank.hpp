// The one rounding rule of the trace statistics for "x% of m items" (the top 0.1% of keys, the
// nearest-rank quantile of reuse distances): ceil(m * per_mille / 1000), at least 1 when m >= 1.
// Integer arithmetic, so 0.9 * 10 is 9 and not ceil(9.000000000000002) = 10.
#pragma once

#include <cstdint>

#include "core/error.hpp"

namespace embscale::workloads {

// m * per_mille must stay below 2^63 (m below 9.2e15 for per_mille <= 1000).
inline std::int64_t ceil_per_mille(std::int64_t m, std::int64_t per_mille) {
  EMBSCALE_EXPECTS(m >= 0 && per_mille > 0 && per_mille <= 1000,
                   "ceil_per_mille needs m >= 0 and 0 < per_mille <= 1000");
  if (m == 0) return 0;
  const std::int64_t rounded_up = (m * per_mille + 999) / 1000;
  return rounded_up < 1 ? 1 : rounded_up;
}

}  // namespace embscale::workloads
