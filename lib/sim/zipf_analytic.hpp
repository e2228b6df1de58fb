// Analytic hit rates for an independent Zipf(s) stream over N keys (rank i drawn with
// p_i = i^-s / H(N, s), each access independent of the others: the independent reference model),
// against which the simulated oracles are checked (tests/sim/zipf_analytic_test.cpp and the
// oracles' tests).
//   * zipf_top_capacity_hit_rate: the C most popular keys' share of the traffic, H(C, s) / H(N, s).
//     No policy holding C keys does better on average in the long run; perfect LFU converges to
//     it (its counts converge to the ranking).
//   * che_lru_hit_rate: LRU by Che's approximation (Che, Tung & Wang, 2002): a key stays in the
//     cache for a characteristic time T after its last access, the T with
//     sum_i (1 - exp(-p_i T)) = C; the hit rate is sum_i p_i (1 - exp(-p_i T)). Asymptotically
//     exact as C grows (Fricker, Robert & Roberts, 2012); within a few 1e-3 of simulation at C = 100.
// Harmonic numbers come from core/math.hpp (O(1) in N). Che's sums over N terms are taken as the
// first kCheDirectTerms terms one by one and the rest by Euler-Maclaurin (the integral by
// Gauss-Legendre quadrature in log x, the first correction term exact): relative error below 1e-12
// against direct sums (tests), O(1) in N, about a millisecond whatever N is.
#pragma once

#include <cstdint>

namespace embscale::sim {

inline constexpr std::int64_t kCheDirectTerms = 4096;

// H(min(C, N), s) / H(N, s); 0 for C <= 0, 1 for C >= N. keys >= 1, s >= 0.
double zipf_top_capacity_hit_rate(std::int64_t capacity, double s, std::int64_t keys);

// Che's characteristic time T (in accesses) of an LRU cache of C keys, 0 < C < N.
double che_characteristic_time(std::int64_t capacity, double s, std::int64_t keys);

// LRU's hit rate by Che's approximation; 0 for C <= 0, 1 for C >= N. keys >= 1, s >= 0.
double che_lru_hit_rate(std::int64_t capacity, double s, std::int64_t keys);

}  // namespace embscale::sim
