#include "core/math.hpp"

#include <cmath>

#include "core/error.hpp"

namespace embscale {

double generalized_harmonic(std::int64_t n, double s) {
  EMBSCALE_EXPECTS(n >= 1, "harmonic number needs n >= 1");
  double sum = 0.0;
  double compensation = 0.0;
  for (std::int64_t i = n; i >= 1; --i) {  // smallest terms first
    const double term = std::pow(static_cast<double>(i), -s) - compensation;
    const double next = sum + term;
    compensation = (next - sum) - term;
    sum = next;
  }
  return sum;
}

double zipf_pmf(std::int64_t k, std::int64_t n, double s) {
  EMBSCALE_EXPECTS(k >= 1 && k <= n, "Zipf rank must lie in [1, n]");
  return std::pow(static_cast<double>(k), -s) / generalized_harmonic(n, s);
}

}  // namespace embscale
