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

double ZipfSampler::hat_area(double from, double to) const {
  // from^(1-s) L E((1-s) L) with L = ln(to/from) from the difference: exact for short intervals.
  const double log_ratio = std::log1p((to - from) / from);
  return std::exp((1.0 - s_) * std::log(from)) * log_ratio * expm1_over_x((1.0 - s_) * log_ratio);
}

namespace {

// Ranks from 2^53 on are not all doubles: a draw x there stands for the integers of its ulp cell.
constexpr double kExactRanks = 0x1.0p53;

// round(x) as a rank in [1, n], without converting a double at or past 2^63 (undefined).
std::int64_t nearest_rank(double x, std::int64_t n) noexcept {
  const double rounded = std::floor(x + 0.5);
  if (rounded < 1.0) return 1;
  if (rounded >= static_cast<double>(n)) return n;  // double(n) >= n: the cast below stays in range
  return static_cast<std::int64_t>(rounded);
}

}  // namespace

std::int64_t ZipfSampler::operator()(RngCursor& rng) const {
  for (;;) {
    const double u = h_integral_n_ + rng.uniform() * (h_integral_x1_ - h_integral_n_);
    const double x = H_inverse(u);
    const std::int64_t k = nearest_rank(x, n_);
    const auto kd = static_cast<double>(k);
    // Under the bar of k: u >= H(k + 1/2) - h(k), i.e. the hat's area between x and k + 1/2 is
    // at most h(k). Taken as that area, not as a difference of H values: at large k, h(k) is
    // below the rounding of H (near 10^-6 at n = 2^63, s = 1/2) and the difference is noise.
    if (!(kd - x <= accept_threshold_ || hat_area(x, kd + 0.5) <= h(kd))) continue;
    if (kd < kExactRanks) return k;
    // Beyond 2^53, x and k are multiples of the spacing of doubles there (2 .. 1024): spread the
    // accepted mass of k uniformly over the integers of its cell [k - spacing/2, k + spacing/2).
    // The pmf varies by a factor (1 + spacing/k)^-s ~ 1 - s 2^-52 across a cell, so this is exact
    // to double precision; cells tile the integers except at the binade edges (powers of two),
    // and ranks past n fold back onto n (at most half a cell of mass, < 2^-52 of the total).
    const auto spacing = static_cast<std::int64_t>(std::nextafter(kd, INFINITY) - kd);
    const std::int64_t low = k - spacing / 2;  // > 2^52: no underflow
    const auto offset = static_cast<std::int64_t>(rng.bits64() % static_cast<std::uint64_t>(spacing));
    return offset > n_ - low ? n_ : low + offset;  // low + offset <= n, without overflowing int64
  }
}

}  // namespace embscale::workloads
