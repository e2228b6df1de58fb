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
#pragma once

#include <cstdint>

#include "core/rng.hpp"

namespace embscale::workloads {

class ZipfSampler {
 public:
  ZipfSampler(std::int64_t n, double exponent);

  // A rank in [1, n]; consumes one or more draws from `rng`.
  std::int64_t operator()(RngCursor& rng) const;

  std::int64_t n() const noexcept { return n_; }
  double exponent() const noexcept { return s_; }

 private:
  double H(double x) const;         // integral of the hat, H(x) = (x^(1-s) - 1) / (1 - s)
  double H_inverse(double y) const;
  double h(double x) const;         // the hat, x^-s
  double hat_area(double from, double to) const;  // integral of the hat over [from, to]

  std::int64_t n_;
  double s_;
  double h_integral_x1_;
  double h_integral_n_;
  double accept_threshold_;
};

}  // namespace embscale::workloads
