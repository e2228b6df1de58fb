// Statistics for regression verdicts (embscale compare): the Mann-Whitney U test, as Google
// Benchmark's compare.py uses on repetitions, block means for per-iteration samples, and Holm's
// correction for testing many figures at once.
//
// Why not raw iterations: consecutive iterations are autocorrelated (caches, allocator state,
// other tenants) and drift, so treating them as independent samples makes any difference look
// significant. Repetitions of a run are close to independent; failing those, means of long
// contiguous blocks after the warm-up are, approximately, when the blocks are much longer than
// the correlation time.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace embscale {

enum class Alternative { kTwoSided, kGreater, kLess };  // kGreater: `b` tends to exceed `a`

struct MannWhitneyResult {
  double u = 0;  // U statistic of sample b: pairs (x in a, y in b) with y > x, ties 1/2
  double p_value = 1;
  bool exact = false;  // exact null distribution (small samples, no ties) or normal approximation
};

// Tests whether the values of `b` tend to differ from (exceed, fall below) those of `a`.
// Exact p-value for na + nb <= 50 without ties; otherwise the normal approximation with tie and
// continuity corrections. Both samples must be non-empty.
MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b, Alternative alternative);

// The smallest one-sided p-value the exact test can give samples of these sizes (no ties):
// 1 / C(na + nb, na), when every value of one sample exceeds every value of the other. A test
// whose smallest p-value is not below the level it is judged at can never reject.
double mann_whitney_smallest_p(std::size_t na, std::size_t nb);

// The exact sign test over pairs (a[i], b[i]) of one length: whether b tends to exceed (fall
// below, differ from) a, from the pairs that differ (ties dropped), whose count of b > a is
// Binomial(pairs, 1/2) when neither side tends either way. For paired samples whose level moves
// alike on both sides (the blocks of two runs over the same iterations of a warming table): the
// pairing cancels the shared trend that a two-sample test would count as noise.
struct SignTestResult {
  std::size_t pairs = 0;    // pairs that differ
  std::size_t greater = 0;  // of them, those with b > a
  double p_value = 1;       // 1 when no pair differs
};
SignTestResult sign_test(std::span<const double> a, std::span<const double> b, Alternative alternative);

// The q-quantile of `values` (q in [0, 1]), interpolated linearly between the order statistics
// at q (n - 1) (so the median of an even count is the mean of the middle two); 0 when empty.
double quantile(std::span<const double> values, double q);
inline double median(std::span<const double> values) { return quantile(values, 0.5); }

// Means of `blocks` contiguous, equal blocks of samples[skip:] (the remainder of the division
// is dropped from the end). Throws when fewer samples than blocks remain.
std::vector<double> block_means(std::span<const double> samples, std::size_t skip, std::size_t blocks);

// Holm's step-down adjusted p-values (Holm 1979), in the input order: with the p-values sorted
// ascending p(1) <= ... <= p(m), adjusted(i) = max over j <= i of min(1, (m - j + 1) p(j)).
// Rejecting every hypothesis whose adjusted p-value is below alpha keeps the probability of any
// false rejection among the m at most alpha, whatever the dependence between the tests (step time
// and throughput are the same samples seen twice; the correction needs no independence).
std::vector<double> holm_adjusted(std::span<const double> p_values);

}  // namespace embscale
