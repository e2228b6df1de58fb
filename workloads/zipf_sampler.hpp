// Zipf sampler over ranks 1..n with exponent s >= 0 (P(k) = k^-s / H(n, s)), by rejection-
// inversion (Hörmann & Derflinger, "Rejection-inversion to generate variates from monotone
// discrete distributions", 1996). O(1) memory and expected time whatever n is, so vocabularies
// of 10^11 keys cost nothing to set up; about 1.0-1.1 uniform draws per sample.
//
// Exactness: exact to double precision for n <= 2^53 (every rank is a double). Beyond, an
// accepted draw x stands for the 2 .. 1024 integers its double represents, and one more draw
// picks among them uniformly (the pmf is flat to 2^-52 across them): every rank up to n can
// occur. The head's resolution is that of the uniform u (53 bits over the hat's integral): at
// s = 0.5 and n = 2^63 rank 1 still owns ~10^6 distinct u values.
//
// Idea: the step function k -> k^-s is dominated by the continuous hat h(x) = x^-s shifted by
// half a step; draw x from the hat by inverting its integral H, round to k, accept when the point
// falls under the bar of k. The first branch (k - x <= threshold) accepts most draws without
// evaluating H again.
//
// Batches: draw_each and fill give exactly the ranks and cursor positions of one operator() call
// per draw, faster. A draw's first candidate (its Philox block, H's inverse, the rounding) is a
// pure function of its counter, so they compute it for many draws at once in SIMD lanes
// (lib/core/vector_math.hpp: the same bits as the scalar path), then finish each draw alone:
// the quick acceptance, else the full test, and a redraw where rejected.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>

#include "core/rng.hpp"
#include "core/simd_level.hpp"
#include "core/vector_math.hpp"

namespace embscale::workloads {

class ZipfSampler {
 public:
  ZipfSampler(std::int64_t n, double exponent);

  // A rank in [1, n]; consumes one or more draws from `rng`.
  std::int64_t operator()(RngCursor& rng) const;

  // ranks[i] = (*this)(cursors[i]) for every i, each cursor left where that call leaves it.
  // `level` picks the SIMD code (the same results from each; tests compare them).
  void draw_each(std::span<RngCursor> cursors, std::span<std::int64_t> ranks, SimdLevel level = simd_level()) const;
  // ranks[i] = (*this)(rng) for i = 0, 1, ... in turn: one stream's consecutive draws.
  void fill(RngCursor& rng, std::span<std::int64_t> ranks, SimdLevel level = simd_level()) const;

  std::int64_t n() const noexcept { return n_; }
  double exponent() const noexcept { return s_; }

  // A draw's point x under the hat for a uniform in [0, 1), and x's rank: round(x) within [1, n],
  // as a double (double(n) where x rounds past n). No branches: the batch paths vectorize it.
  struct Candidate {
    double x;
    double rank;
  };
  Candidate candidate(double uniform) const noexcept {
    const double x = H_inverse(h_integral_n_ + uniform * (h_integral_x1_ - h_integral_n_));
    const double rounded = std::floor(x + 0.5);
    const double at_least_one = rounded < 1.0 ? 1.0 : rounded;
    return {x, at_least_one < n_as_double_ ? at_least_one : n_as_double_};
  }

 private:
  // Under the bar of the candidate's rank: accept it.
  bool accepted(const Candidate& c) const;
  // The rank of an accepted candidate (beyond 2^53: one of the integers its double stands for).
  std::int64_t accepted_rank(double rank, RngCursor& rng) const;
  // Finishes a draw whose first candidate is `c` (rng past its draw): accepts it or redraws.
  std::int64_t finish(const Candidate& c, RngCursor& rng) const;

  double H(double x) const;                       // integral of the hat, H(x) = (x^(1-s) - 1) / (1 - s)
  double h(double x) const;                       // the hat, x^-s
  double hat_area(double from, double to) const;  // integral of the hat over [from, to]

  // H^-1(y) = (1 + (1 - s) y)^(1 / (1 - s)) = exp(log1p(t) / (1 - s)), t = (1 - s) y; near
  // t = 0 (s near 1; at s = 1 it is exp(y)) log1p(t) / (1 - s) is y log1p(t) / t by its series.
  // Both computed, one chosen: branch-free. 1 / (1 - s) is inf at s = 1, where the series is taken.
  double H_inverse(double y) const noexcept {
    const double t = vmath::raise_to(y * one_minus_s_, -1.0);  // rounding can push t below -1
    const double direct = vmath::vlog1p(t) * inverse_one_minus_s_;
    const double series = (1.0 - t * (0.5 - t * (1.0 / 3.0 - 0.25 * t))) * y;
    return vmath::vexp(std::abs(t) > 1e-8 ? direct : series);
  }

  std::int64_t n_;
  double n_as_double_;  // n rounded to a double: 2^63 for n = 2^63 - 1
  double s_;
  double one_minus_s_;
  double inverse_one_minus_s_;  // 1 / (1 - s); inf at s = 1
  double h_integral_x1_;
  double h_integral_n_;
  double accept_threshold_;
};

}  // namespace embscale::workloads
