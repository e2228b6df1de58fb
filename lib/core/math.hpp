// Exact formulas shared by workloads, simulation and planning: power sums, generalized harmonic
// numbers and the Zipf distribution over ranks 1..n with exponent s >= 0:
//   pmf(k) = k^-s / H(n, s),   H(n, s) = sum_{i=1..n} i^-s,   cdf(k) = H(k, s) / H(n, s).
//
// Every function is O(1) in n (n up to 2^63 - 1): a power sum over more than kDirectTerms terms
// adds its first kDirectTerms - 1 terms directly and the rest by the Euler-Maclaurin formula
// with seven Bernoulli corrections (B2 .. B14). For s > 0, x^-s is completely monotone, so the
// remainder is smaller than the first omitted correction, |B16| / 16! (s)_15 m^(-s-15) with m =
// kDirectTerms: below 1e-16 of the sum for every s >= 0 (the tests hold the result to 4e-15 of
// long-double sums; the worst seen is 7.3e-16). At s = 0 the corrections vanish: the count.
#pragma once

#include <cstdint>

namespace embscale {

inline constexpr std::int64_t kDirectTerms = 10;

// sum_{i=first..last} i^-s, for 1 <= first <= last. The tail of a Zipf distribution is
// power_sum(k + 1, n, s) / H(n, s) without the cancellation of 1 - cdf(k).
double power_sum(std::int64_t first, std::int64_t last, double s);

// H(n, s) = power_sum(1, n, s), n >= 1.
double generalized_harmonic(std::int64_t n, double s);

// P(rank = k), 1 <= k <= n.
double zipf_pmf(std::int64_t k, std::int64_t n, double s);
// P(rank <= k), 0 <= k <= n.
double zipf_cdf(std::int64_t k, std::int64_t n, double s);
// P(rank > k), 0 <= k <= n: accurate where it is tiny (the tail of a vocabulary of 10^11 keys).
double zipf_tail(std::int64_t k, std::int64_t n, double s);

}  // namespace embscale
