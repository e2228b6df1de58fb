// Exact formulas shared by workloads, simulation and planning: generalized harmonic numbers and
// the Zipf distribution over ranks 1..n with exponent s >= 0:
//   pmf(k) = k^-s / H(n, s),   H(n, s) = sum_{i=1..n} i^-s.
#pragma once

#include <cstdint>

namespace embscale {

// H(n, s), summed from the smallest term up (Kahan) for accuracy. O(n): for tests, oracles and
// planning at modest n; samplers never call it.
double generalized_harmonic(std::int64_t n, double s);

double zipf_pmf(std::int64_t k, std::int64_t n, double s);

}  // namespace embscale
