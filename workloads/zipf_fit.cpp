#include "workloads/zipf_fit.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/math.hpp"

namespace embscale::workloads {
namespace {

// The sufficient statistics of the model: C, A and n. L depends on the counts through C and A
// only, so one O(m) pass serves every evaluation.
struct ZipfSample {
  double accesses = 0;  // C
  double log_rank = 0;  // A = sum c_k ln k
  std::int64_t ranks = 0;

  // L(s) / C: per-access, so the search's tolerance does not scale with the trace.
  double mean_log_likelihood(double s) const {
    return -s * log_rank / accesses - std::log(generalized_harmonic(ranks, s));
  }
};

ZipfSample summarize(std::span<const std::int64_t> counts_descending, std::int64_t ranks) {
  EMBSCALE_EXPECTS(ranks >= static_cast<std::int64_t>(counts_descending.size()),
                   "Zipf ranks n must be at least the number of observed keys");
  ZipfSample sample;
  sample.ranks = ranks;
  for (std::size_t i = 0; i < counts_descending.size(); ++i) {
    EMBSCALE_EXPECTS(counts_descending[i] >= 0 && (i == 0 || counts_descending[i] <= counts_descending[i - 1]),
                     "Zipf counts must be non-negative and non-increasing (rank order)");
    sample.accesses += static_cast<double>(counts_descending[i]);
    sample.log_rank += static_cast<double>(counts_descending[i]) * std::log(static_cast<double>(i + 1));
  }
  return sample;
}

// The maximizer of a unimodal f on [lo, hi], to an interval narrower than `tolerance`.
template <typename F> double golden_section_maximum(const F& f, double lo, double hi, double tolerance) {
  const double inv_phi = (std::sqrt(5.0) - 1.0) / 2.0;
  double x1 = hi - inv_phi * (hi - lo);
  double x2 = lo + inv_phi * (hi - lo);
  double f1 = f(x1);
  double f2 = f(x2);
  while (hi - lo > tolerance) {
    // Invariant: lo < x1 < x2 < hi and the maximum lies in [lo, hi].
    if (f1 < f2) {
      lo = x1;
      x1 = x2;
      f1 = f2;
      x2 = lo + inv_phi * (hi - lo);
      f2 = f(x2);
    } else {
      hi = x2;
      x2 = x1;
      f2 = f1;
      x1 = hi - inv_phi * (hi - lo);
      f1 = f(x1);
    }
  }
  return (lo + hi) / 2.0;
}

// max_k |observed cdf(k) - H(k, s) / H(n, s)| over the observed ranks k = 1..m; beyond m the
// observed cdf is 1 and the model's rises towards it, so the largest gap is at or before m.
double ks_distance(std::span<const std::int64_t> counts_descending, const ZipfSample& sample, double s) {
  const double h_n = generalized_harmonic(sample.ranks, s);
  double observed = 0;
  double model = 0;
  double worst = 0;
  for (std::size_t i = 0; i < counts_descending.size(); ++i) {
    observed += static_cast<double>(counts_descending[i]);
    model += std::pow(static_cast<double>(i + 1), -s);
    worst = std::max(worst, std::abs(observed / sample.accesses - model / h_n));
  }
  return worst;
}

}  // namespace

double zipf_log_likelihood(std::span<const std::int64_t> counts_descending, std::int64_t ranks, double s) {
  EMBSCALE_EXPECTS(ranks >= 1, "Zipf ranks n must be at least 1");
  const ZipfSample sample = summarize(counts_descending, ranks);
  if (sample.accesses == 0) return 0.0;
  return sample.accesses * sample.mean_log_likelihood(s);
}

ZipfFit fit_zipf(std::span<const std::int64_t> counts_descending, std::int64_t ranks) {
  ZipfFit fit;
  fit.ranks = ranks;
  if (ranks < 1) return fit;
  const ZipfSample sample = summarize(counts_descending, ranks);
  fit.accesses = static_cast<std::int64_t>(sample.accesses);
  if (ranks < 2 || sample.accesses == 0) return fit;  // L is flat in s: nothing to fit

  const auto mean_ll = [&](double s) { return sample.mean_log_likelihood(s); };
  const double s = golden_section_maximum(mean_ll, 0.0, kZipfMaxExponent, 1e-9);
  fit.exponent = s;
  fit.log_likelihood = sample.accesses * mean_ll(s);
  fit.at_bound = s < 1e-6 || s > kZipfMaxExponent - 1e-6;

  // -L''/C = Var_s(ln k) by a central second difference of L/C with step h (error O(h^2); at a
  // bound, centered one step inside, error O(h); rounding eps |L/C| / h^2 ~ 1e-9, far below the
  // variance). L'' does not depend on the counts, only on s and n.
  constexpr double h = 1e-3;
  const double center = std::clamp(s, h, kZipfMaxExponent - h);
  const double curvature = (mean_ll(center - h) - 2.0 * mean_ll(center) + mean_ll(center + h)) / (h * h);
  if (curvature < 0) fit.standard_error = 1.0 / std::sqrt(-curvature * sample.accesses);
  fit.ks_distance = ks_distance(counts_descending, sample, s);
  return fit;
}

}  // namespace embscale::workloads
