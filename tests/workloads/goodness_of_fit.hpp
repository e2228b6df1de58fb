// Pearson's chi-square goodness-of-fit test for the samplers' tests: observed counts per cell
// against the cells' exact probabilities (the independent reference each test computes).
//
// Cells are merged in order until each expects at least kMinExpected draws (the chi-square
// approximation needs it), and the statistic is compared with the 0.999 quantile of chi-square
// with (cells - 1) degrees of freedom (Wilson-Hilferty). Fixed seeds make every outcome
// deterministic; the threshold says the sampler is right, not that it is lucky.
#pragma once

#include <cmath>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

namespace embscale::testing {

struct ChiSquare {
  double statistic = 0.0;
  double quantile_999 = 0.0;
  std::size_t cells = 0;
  bool passes() const { return statistic < quantile_999; }
  std::string report() const {
    std::ostringstream out;
    out << "chi2 " << statistic << " over " << cells << " cells, 0.999 quantile " << quantile_999;
    return out.str();
  }
};

inline double chi_square_quantile_999(double degrees_of_freedom) {
  const double df = degrees_of_freedom;
  const double z = 3.0902;  // the standard normal's 0.999 quantile
  return df * std::pow(1.0 - 2.0 / (9.0 * df) + z * std::sqrt(2.0 / (9.0 * df)), 3.0);
}

// counts[i] draws fell in cell i, whose probability is probabilities[i] (summing to 1).
inline ChiSquare chi_square(const std::vector<std::int64_t>& counts, const std::vector<double>& probabilities) {
  constexpr double kMinExpected = 20.0;
  double samples = 0.0;
  for (const auto c : counts) samples += static_cast<double>(c);
  std::vector<double> observed, expected;
  double o = 0.0, e = 0.0;
  for (std::size_t i = 0; i < counts.size(); ++i) {
    o += static_cast<double>(counts[i]);
    e += probabilities[i] * samples;
    if (e >= kMinExpected) {
      observed.push_back(o);
      expected.push_back(e);
      o = e = 0.0;
    }
  }
  if (e > 0.0 || o > 0.0) {  // a thin last cell joins the one before
    if (expected.empty()) {
      observed.push_back(o);
      expected.push_back(e);
    } else {
      observed.back() += o;
      expected.back() += e;
    }
  }
  ChiSquare result;
  result.cells = expected.size();
  for (std::size_t i = 0; i < expected.size(); ++i)
    result.statistic += (observed[i] - expected[i]) * (observed[i] - expected[i]) / expected[i];
  result.quantile_999 = chi_square_quantile_999(static_cast<double>(result.cells > 1 ? result.cells - 1 : 1));
  return result;
}

}  // namespace embscale::testing
