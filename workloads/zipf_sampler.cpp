#include "workloads/zipf_sampler.hpp"

#include <cmath>

#include "core/error.hpp"

namespace embscale::workloads {
namespace {

// log1p(x) / x, accurate near 0 (series), so H and its inverse stay stable as s -> 1.
double log1p_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::log1p(x) / x;
  return 1.0 - x * (0.5 - x * (1.0 / 3.0 - 0.25 * x));
}

// expm1(x) / x, accurate near 0.
double expm1_over_x(double x) {
  if (std::abs(x) > 1e-8) return std::expm1(x) / x;
  return 1.0 + x * 0.5 * (1.0 + x / 3.0 * (1.0 + 0.25 * x));
}

}  // namespace

ZipfSampler::ZipfSampler(std::int64_t n, double exponent) : n_(n), s_(exponent) {
  EMBSCALE_EXPECTS(n >= 1, "Zipf needs at least one rank");
  EMBSCALE_EXPECTS(exponent >= 0.0 && std::isfinite(exponent), "Zipf exponent must be finite and >= 0");
  h_integral_x1_ = H(1.5) - 1.0;
  h_integral_n_ = H(static_cast<double>(n) + 0.5);
  accept_threshold_ = 2.0 - H_inverse(H(2.5) - h(2.0));
}

double ZipfSampler::H(double x) const {
  const double log_x = std::log(x);
  return expm1_over_x((1.0 - s_) * log_x) * log_x;
}

double ZipfSampler::H_inverse(double y) const {
  double t = y * (1.0 - s_);
  if (t < -1.0) t = -1.0;  // rounding can push t just past the domain of log1p
  return std::exp(log1p_over_x(t) * y);
}

double ZipfSampler::h(double x) const { return std::exp(-s_ * std::log(x)); }

std::int64_t ZipfSampler::operator()(RngCursor& rng) const {
  for (;;) {
    const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
    const double x = H_inverse(u);
    auto k = static_cast<std::int64_t>(x + 0.5);
    if (k < 1) k = 1;
    if (k > n_) k = n_;
    const auto kd = static_cast<double>(k);
    if (kd - x <= accept_threshold_ || u >= H(kd + 0.5) - h(kd)) return k;
  }
}

}  // namespace embscale::workloads
