// Maximum-likelihood fit of a Zipf exponent to observed key frequencies.
//
// Model: keys ranked by observed count (rank 1 = most frequent; ties in any order, which changes
// nothing below since tied keys share one count), P(rank k) = k^-s / H(n, s) over ranks 1..n.
// With c_k the count of rank k and C = sum c_k, the log-likelihood of the accesses is
//   L(s) = -s A - C ln H(n, s),   A = sum_k c_k ln k,
// and L''(s) = -C Var_s(ln k) < 0: L is strictly concave for n >= 2, so its maximum on [0, 10]
// is unique and the boundary when the stationary point lies outside.
//
// Which n: the number of distinct keys seen, or the key space of the slot (slot_size_array) when
// the caller knows it. They differ by the unseen tail: with n = distinct keys the model has no
// mass beyond the last seen rank, so when a sample is small against its vocabulary the fit
// flattens the head to cover the tail it cannot place and s comes out low (and for a sample that
// saw every key, the two coincide). With n = key space, unseen ranks count 0 and pull mass into
// the model's tail, which matches a sampler over that space; what remains is the bias of ranking
// by observed counts (it always lowers A, by the rearrangement inequality, so it raises s where
// the tail's counts are mostly noise).
//
// Method: golden-section search on L itself (derivative-free), to |interval| < 1e-9. Why not
// Newton on L': L' needs sum k^-s ln k over up to 2^63 ranks, a second O(1) Euler-Maclaurin
// evaluation to write and verify; L needs only H(n, s) from core/math (O(1), within 1e-15).
// Concavity makes the function unimodal, which is all golden section needs; ~45 evaluations of
// O(1) each. The precision of the maximizer is limited by the flatness of L at its top:
// |ds| ~ sqrt(2 eps |L| / |L''|), about 1e-7 for every trace, far below the standard error.
#pragma once

#include <cstdint>
#include <limits>
#include <span>

namespace embscale::workloads {

inline constexpr double kZipfMaxExponent = 10.0;

struct ZipfFit {
  static constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
  // s maximizing L on [0, kZipfMaxExponent]; NaN when s is not identifiable (n < 2 or no access).
  double exponent = kNaN;
  // 1 / sqrt(-L''(s)) (observed Fisher information, L'' by central differences of L). Assumes
  // independent accesses; a trace's accesses are correlated, so take it as a lower bound.
  double standard_error = kNaN;
  double log_likelihood = kNaN;  // L at the fitted s (natural log, summed over accesses)
  // Kolmogorov-Smirnov distance between the observed and fitted rank distributions:
  // max over k of |sum_{i<=k} c_i / C - H(k, s) / H(n, s)| (O(distinct keys) powers).
  double ks_distance = kNaN;
  std::int64_t ranks = 0;     // n
  std::int64_t accesses = 0;  // C
  bool at_bound = false;      // the maximum lies on 0 or kZipfMaxExponent (within 1e-6)
};

// L(s) as above. counts_descending: the observed counts, non-increasing (rank k at index k - 1);
// ranks: n >= counts_descending.size(), the ranks beyond it count 0.
double zipf_log_likelihood(std::span<const std::int64_t> counts_descending, std::int64_t ranks, double s);

// The fit described above; same arguments as zipf_log_likelihood.
ZipfFit fit_zipf(std::span<const std::int64_t> counts_descending, std::int64_t ranks);

}  // namespace embscale::workloads
