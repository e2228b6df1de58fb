#include "sim/zipf_analytic.hpp"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.hpp"
#include "core/gauss_legendre.hpp"
#include "core/math.hpp"

namespace embscale::sim {
namespace {

void check_arguments(double s, std::int64_t keys) {
  EMBSCALE_EXPECTS(keys >= 1, "Zipf hit rate needs at least 1 key");
  EMBSCALE_EXPECTS(s >= 0.0 && std::isfinite(s), "Zipf hit rate needs a finite exponent s >= 0");
}

// Panel width in y = ln x. The integrands below vary on the scale of 1 / s in y, at most a few
// times faster where exp(-u) turns on; 8 nodes per 1/4 keeps the quadrature error below 1e-14
// of the sums for s <= 2 (tests/sim/zipf_analytic_test.cpp holds it to direct sums).
constexpr double kPanel = 0.25;

// The terms of Che's sums at rank x (a real number in the tail): with u = T p(x), p(x) = x^-s / H,
//   occupancy(x) = 1 - exp(-u)        (its sum over the ranks is the expected cache content)
//   hit(x)       = p(x) (1 - exp(-u)) (its sum is the hit rate)
//   miss(x)      = p(x) exp(-u)       (its sum is the miss rate, the occupancy's slope in T)
// and their derivatives in x (du/dx = -s u / x; dp/dx = -s p / x), for Euler-Maclaurin's first
// correction. Hit and miss are summed apart: 1 - hit cancels where the hit rate nears 1.
struct CheTerms {
  double occupancy, hit, miss, d_occupancy, d_hit, d_miss;
};

struct CheTotals {
  double occupancy = 0.0, hit = 0.0, miss = 0.0;
};

class CheSums {
 public:
  CheSums(double s, std::int64_t keys) : s_(s), keys_(keys), inverse_h_(1.0 / generalized_harmonic(keys, s)) {
    const std::int64_t direct = std::min(keys, kCheDirectTerms);
    p_.resize(static_cast<std::size_t>(direct));
    for (std::int64_t i = 1; i <= direct; ++i)
      p_[static_cast<std::size_t>(i - 1)] = std::pow(static_cast<double>(i), -s) * inverse_h_;
  }

  double smallest_p() const { return std::pow(static_cast<double>(keys_), -s_) * inverse_h_; }

  // The three sums over the N ranks at characteristic time t.
  CheTotals sums(double t) const {
    // The tail first (smaller terms), then the head from its smallest term up.
    CheTotals total;
    const auto first = static_cast<std::int64_t>(p_.size()) + 1;
    if (first <= keys_) total = tail(t, first);
    for (std::size_t i = p_.size(); i-- > 0;) {
      const double u = p_[i] * t;
      const double filled = -std::expm1(-u);
      total.occupancy += filled;
      total.hit += p_[i] * filled;
      total.miss += p_[i] * std::exp(-u);
    }
    return total;
  }

 private:
  CheTerms terms(double t, double x) const {
    const double p = std::pow(x, -s_) * inverse_h_;
    const double u = t * p;
    const double e = std::exp(-u);
    const double filled = -std::expm1(-u);
    const double ds = -s_ / x;
    return {filled, p * filled, p * e, ds * u * e, ds * p * (filled + u * e), ds * p * e * (1.0 - u)};
  }

  // Euler-Maclaurin over the ranks [a, b], b >= a:
  //   sum f(i) = integral_a^b f + (f(a) + f(b)) / 2 + (f'(b) - f'(a)) / 12 + R,
  // |R| <= integral |f'''| / 120; the terms' third derivatives are O(x^-3) of the terms, so past
  // kCheDirectTerms R is below 1e-11 of the sum. The integral in y = ln x: dx = x dy.
  CheTotals tail(double t, std::int64_t first) const {
    const auto a = static_cast<double>(first);
    const auto b = static_cast<double>(keys_);
    const CheTerms at_a = terms(t, a);
    const CheTerms at_b = terms(t, b);
    CheTotals sum{(at_a.occupancy + at_b.occupancy) / 2.0 + (at_b.d_occupancy - at_a.d_occupancy) / 12.0,
                  (at_a.hit + at_b.hit) / 2.0 + (at_b.d_hit - at_a.d_hit) / 12.0,
                  (at_a.miss + at_b.miss) / 2.0 + (at_b.d_miss - at_a.d_miss) / 12.0};
    const double y0 = std::log(a);
    const double span = std::log(b) - y0;
    const auto panels = std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(span / kPanel)));
    const double width = span / static_cast<double>(panels);
    for (std::int64_t k = 0; k < panels; ++k) {
      const double middle = y0 + (static_cast<double>(k) + 0.5) * width;
      for (int j = 0; j < 4; ++j) {
        for (const double side : {-1.0, 1.0}) {
          const double x = std::exp(middle + side * kGaussLegendreNodes[j] * width / 2.0);
          const CheTerms f = terms(t, x);
          const double w = kGaussLegendreWeights[j] * width / 2.0 * x;
          sum.occupancy += w * f.occupancy;
          sum.hit += w * f.hit;
          sum.miss += w * f.miss;
        }
      }
    }
    return sum;
  }

  double s_;
  std::int64_t keys_;
  double inverse_h_;
  std::vector<double> p_;  // p_1 .. p_K, K = min(N, kCheDirectTerms)
};

}  // namespace

double zipf_top_capacity_hit_rate(std::int64_t capacity, double s, std::int64_t keys) {
  check_arguments(s, keys);
  if (capacity <= 0) return 0.0;
  if (capacity >= keys) return 1.0;
  return generalized_harmonic(capacity, s) / generalized_harmonic(keys, s);
}

double che_characteristic_time(std::int64_t capacity, double s, std::int64_t keys) {
  check_arguments(s, keys);
  EMBSCALE_EXPECTS(capacity >= 1 && capacity < keys, "Che's characteristic time needs 1 <= capacity < keys");
  const CheSums che(s, keys);
  const auto c = static_cast<double>(capacity);
  // occupancy(T) = sum_i (1 - exp(-p_i T)) rises from 0 to N, concave, with occupancy(T) <= T
  // (1 - e^-x <= x, sum p_i = 1) and occupancy(T) >= N (1 - exp(-p_N T)). So the root lies in
  // [C, -ln(1 - C/N) / p_N]; Newton's method from the left end stays left of the root (the
  // tangent of a concave function lies above it) and rises monotonically to it. The derivative
  // is sum_i p_i exp(-p_i T), the miss rate.
  const double upper = -std::log1p(-c / static_cast<double>(keys)) / che.smallest_p();
  double t = c;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const CheTotals at = che.sums(t);
    const double step = (c - at.occupancy) / at.miss;
    if (!(step > 0.0) || !std::isfinite(step)) break;  // at the root to rounding
    const double next = std::min(t + step, upper);
    if (next - t <= 1e-15 * t) break;
    t = next;
  }
  return t;
}

double che_lru_hit_rate(std::int64_t capacity, double s, std::int64_t keys) {
  check_arguments(s, keys);
  if (capacity <= 0) return 0.0;
  if (capacity >= keys) return 1.0;
  const double t = che_characteristic_time(capacity, s, keys);
  return CheSums(s, keys).sums(t).hit;
}

}  // namespace embscale::sim
