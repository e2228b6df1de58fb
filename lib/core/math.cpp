#include "core/math.hpp"

#include <cmath>

#include "core/error.hpp"

namespace embscale {
namespace {

// expm1(t) / t, accurate near t = 0 (so the integral below is exact at s = 1 and stable near it).
double expm1_over_t(double t) {
  if (std::abs(t) > 1e-5) return std::expm1(t) / t;
  return 1.0 + t / 2.0 * (1.0 + t / 3.0 * (1.0 + t / 4.0 * (1.0 + t / 5.0)));
}

// B_2j / (2j)! for j = 1..7.
constexpr double kBernoulliOverFactorial[] = {
    1.0 / 6.0 / 2.0,                // B2 / 2!
    -1.0 / 30.0 / 24.0,             // B4 / 4!
    1.0 / 42.0 / 720.0,             // B6 / 6!
    -1.0 / 30.0 / 40320.0,          // B8 / 8!
    5.0 / 66.0 / 3628800.0,         // B10 / 10!
    -691.0 / 2730.0 / 479001600.0,  // B12 / 12!
    7.0 / 6.0 / 87178291200.0,      // B14 / 14!
};

// sum_{i=first..last} i^-s term by term, smallest terms first.
double direct_sum(std::int64_t first, std::int64_t last, double s) {
  double sum = 0.0;
  for (std::int64_t i = last; i >= first; --i) sum += std::pow(static_cast<double>(i), -s);
  return sum;
}

// sum_{i=a..b} i^-s for b > a >= kDirectTerms - 1 by Euler-Maclaurin:
//   integral_a^b x^-s dx + (a^-s + b^-s) / 2 + sum_j B_2j / (2j)! (f^(2j-1)(b) - f^(2j-1)(a)),
// with f^(2j-1)(x) = -(s)_(2j-1) x^(-s-2j+1), (s)_n the rising factorial s (s+1) ... (s+n-1).
double euler_maclaurin(std::int64_t first, std::int64_t last, double s) {
  const auto a = static_cast<double>(first);
  const auto b = static_cast<double>(last);
  // ln(b/a) from the exact difference: short ranges far from 1 keep their digits.
  const double log_ratio = std::log1p(static_cast<double>(last - first) / a);
  // integral_a^b x^-s dx = a^(1-s) L E((1-s) L), L = ln(b/a), E(t) = expm1(t)/t: ln(b/a) at s = 1.
  const double integral = std::pow(a, 1.0 - s) * log_ratio * expm1_over_t((1.0 - s) * log_ratio);
  double sum = integral + (std::pow(a, -s) + std::pow(b, -s)) / 2.0;
  double rising = s;  // (s)_(2j-1)
  for (int j = 1; j <= 7; ++j) {
    const double power = s + 2.0 * j - 1.0;
    const double derivative_b = -rising * std::pow(b, -power);
    const double derivative_a = -rising * std::pow(a, -power);
    sum += kBernoulliOverFactorial[j - 1] * (derivative_b - derivative_a);
    rising *= (s + 2.0 * j - 1.0) * (s + 2.0 * j);
  }
  return sum;
}

}  // namespace

double power_sum(std::int64_t first, std::int64_t last, double s) {
  EMBSCALE_EXPECTS(first >= 1 && first <= last, "power sum needs 1 <= first <= last");
  EMBSCALE_EXPECTS(s >= 0.0 && std::isfinite(s), "power sum needs a finite exponent s >= 0");
  if (last - first < kDirectTerms) return direct_sum(first, last, s);
  // The first kDirectTerms - 1 terms directly (Euler-Maclaurin converges poorly below ~10),
  // the rest from `start` on by the formula; added smallest first.
  const std::int64_t start = first + kDirectTerms - 1;
  const double rest = euler_maclaurin(start, last, s);
  return rest + direct_sum(first, start - 1, s);
}

double generalized_harmonic(std::int64_t n, double s) {
  EMBSCALE_EXPECTS(n >= 1, "harmonic number needs n >= 1");
  return power_sum(1, n, s);
}

double zipf_pmf(std::int64_t k, std::int64_t n, double s) {
  EMBSCALE_EXPECTS(k >= 1 && k <= n, "Zipf rank must lie in [1, n]");
  return std::pow(static_cast<double>(k), -s) / generalized_harmonic(n, s);
}

double zipf_cdf(std::int64_t k, std::int64_t n, double s) {
  EMBSCALE_EXPECTS(k >= 0 && k <= n, "Zipf cdf needs 0 <= k <= n");
  if (k == 0) return 0.0;
  if (k == n) return 1.0;
  return generalized_harmonic(k, s) / generalized_harmonic(n, s);
}

double zipf_tail(std::int64_t k, std::int64_t n, double s) {
  EMBSCALE_EXPECTS(k >= 0 && k <= n, "Zipf tail needs 0 <= k <= n");
  if (k == n) return 0.0;
  if (k == 0) return 1.0;
  return power_sum(k + 1, n, s) / generalized_harmonic(n, s);
}

}  // namespace embscale
