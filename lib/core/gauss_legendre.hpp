// 8-point Gauss-Legendre quadrature, shared by the analytic models that integrate smooth tails of
// power laws (sim/zipf_analytic.cpp, plan/key_popularity.cpp).
#pragma once

namespace embscale {

// Nodes and weights on [-1, 1], the positive half (the rule is symmetric).
inline constexpr double kGaussLegendreNodes[] = {0.1834346424956498, 0.5255324099163290, 0.7966664774136267,
                                                 0.9602898564975363};
inline constexpr double kGaussLegendreWeights[] = {0.3626837833783620, 0.3137066458778873, 0.2223810344533745,
                                                   0.1012285362903763};

namespace gauss_legendre_detail {
constexpr double weight_sum() {
  return 2.0 *
         (kGaussLegendreWeights[0] + kGaussLegendreWeights[1] + kGaussLegendreWeights[2] + kGaussLegendreWeights[3]);
}
constexpr double second_moment() {
  double sum = 0.0;
  for (int i = 0; i < 4; ++i) sum += 2.0 * kGaussLegendreWeights[i] * kGaussLegendreNodes[i] * kGaussLegendreNodes[i];
  return sum;
}
}  // namespace gauss_legendre_detail

// The rule integrates 1 and x^2 exactly on [-1, 1]: a mistyped digit fails here, not in a sum.
static_assert(gauss_legendre_detail::weight_sum() - 2.0 < 1e-15 && gauss_legendre_detail::weight_sum() - 2.0 > -1e-15,
              "8-point Gauss-Legendre weights must sum to 2");
static_assert(gauss_legendre_detail::second_moment() - 2.0 / 3.0 < 1e-15 &&
                  gauss_legendre_detail::second_moment() - 2.0 / 3.0 > -1e-15,
              "8-point Gauss-Legendre must integrate x^2 to 2/3");

// The integral of f over [a, b] in panels of `panel_width` (or fewer, equal ones) in y = ln x,
// 8 nodes per panel: for integrands that vary on a logarithmic scale (power laws). 0 < a <= b.
template <class F> double integrate_log_panels(F f, double a, double b, double panel_width);

}  // namespace embscale

#include <algorithm>
#include <cmath>
#include <cstdint>

template <class F> double embscale::integrate_log_panels(F f, double a, double b, double panel_width) {
  if (!(b > a)) return 0.0;
  const double y0 = std::log(a);
  const double span = std::log(b) - y0;
  const auto panels = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(span / panel_width)));
  const double width = span / static_cast<double>(panels);
  double sum = 0.0;
  for (std::int64_t k = 0; k < panels; ++k) {
    const double middle = y0 + (static_cast<double>(k) + 0.5) * width;
    for (int j = 0; j < 4; ++j) {
      for (const double side : {-1.0, 1.0}) {
        const double x = std::exp(middle + side * kGaussLegendreNodes[j] * width / 2.0);
        sum += kGaussLegendreWeights[j] * width / 2.0 * x * f(x);
      }
    }
  }
  return sum;
}
