// exp, log and log1p for loops the compiler vectorizes: no branches, no tables, no calls, only
// IEEE operations (+ - * /, exact integer bit work on the representation), so a loop over
// arrays of them compiles to SIMD code and the scalar and SIMD results are the same bits as long
// as neither contracts a * b + c into an FMA (build such code with -ffp-contract=off).
//
// Accuracy: below one ulp over their domains here (tests/core/vector_math_test.cpp measures it
// against long-double libm on random arguments). The reductions are Cody & Waite's; log's
// polynomial is Sun's fdlibm minimax fit, exp's the Taylor series to degree 13. Polynomials are
// evaluated by Estrin's scheme: a short dependency chain, which is what a scalar caller waits on.
//
// Domains: vexp for x in [-708, 709] (arguments outside are clamped there, so the result is
// never inf or a subnormal); vlog for finite x >= DBL_MIN (smaller arguments are raised to
// DBL_MIN); vlog1p for t >= -1 + 2^-53 (the same clamp on 1 + t). No NaN handling: callers pass
// numbers.
#pragma once

#include <bit>
#include <cstdint>

namespace embscale::vmath {
namespace detail {

// ln 2 split in two: the high part has 32 significant bits, so k * kLn2Hi is exact for |k| < 2^20.
inline constexpr double kLn2Hi = 6.93147180369123816490e-01;
inline constexpr double kLn2Lo = 1.90821492927058770002e-10;
inline constexpr double kInvLn2 = 1.44269504088896338700e+00;
// Adding and subtracting 1.5 * 2^52 rounds a double of magnitude < 2^51 to the nearest integer
// (ties to even) in the current rounding mode, without a conversion instruction.
inline constexpr double kRoundShift = 0x1.8p52;

// e^r = 1 + r + r^2 (1/2! + r/3! + ... + r^11/13!): the Taylor series to degree 13, whose
// remainder on |r| <= ln2 / 2 is below 5e-18 relative. Evaluated by Estrin's scheme (pairs of
// coefficients combined with r^2, r^4, r^8), so its latency is a few multiplies deep rather than
// thirteen, and without the division of a rational form.
inline constexpr double kInverseFactorial[14] = {
    1.0,        1.0,         1.0 / 2,      1.0 / 6,       1.0 / 24,       1.0 / 120,       1.0 / 720,
    1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800, 1.0 / 479001600, 1.0 / 6227020800};

// log(1 + f) = 2 atanh(s), s = f / (2 + f), |s| < 0.1716 for m in [sqrt(2)/2, sqrt(2)):
// 2s + s R(s^2), R a degree-7 minimax polynomial in z = s^2 (odd powers only).
inline constexpr double kLogLg1 = 6.666666666666735130e-01;
inline constexpr double kLogLg2 = 3.999999999940941908e-01;
inline constexpr double kLogLg3 = 2.857142874366239149e-01;
inline constexpr double kLogLg4 = 2.222219843214978396e-01;
inline constexpr double kLogLg5 = 1.818357216161805012e-01;
inline constexpr double kLogLg6 = 1.531383769920937332e-01;
inline constexpr double kLogLg7 = 1.479819860511658591e-01;

inline constexpr double kMinNormal = 0x1.0p-1022;

}  // namespace detail

// x raised to at least `low` (to within an ulp of low), written as x plus a correction rather
// than a choice between x and a constant: with a constant on one path GCC specializes the rest of
// a loop's body for it and then cannot vectorize the loop.
constexpr double raise_to(double x, double low) noexcept {
  const double shortfall = low - x;
  return x + (shortfall > 0.0 ? shortfall : 0.0);
}
// x lowered to at most `high` (to within an ulp), likewise.
constexpr double lower_to(double x, double high) noexcept {
  const double excess = x - high;
  return x - (excess > 0.0 ? excess : 0.0);
}

// e^x. Reduction x = k ln2 + r, |r| <= ln2 / 2 (k by rounding, r in two parts hi - lo so that it
// carries about 70 bits), e^r by its series, summed as 1 + (hi + (series tail - lo)) so that the
// rounding of r = hi - lo does not enter, times 2^k built in the exponent field.
constexpr double vexp(double x) noexcept {
  using namespace detail;
  const auto& c = kInverseFactorial;
  x = lower_to(raise_to(x, -708.0), 709.0);
  const double k = (x * kInvLn2 + kRoundShift) - kRoundShift;  // |k| <= 1022: exact integer
  const double hi = x - k * kLn2Hi;
  const double lo = k * kLn2Lo;
  const double r = hi - lo;
  const double r2 = r * r;
  const double r4 = r2 * r2;
  const double r8 = r4 * r4;
  const double p23 = c[2] + r * c[3], p45 = c[4] + r * c[5], p67 = c[6] + r * c[7];
  const double p89 = c[8] + r * c[9], p1011 = c[10] + r * c[11], p1213 = c[12] + r * c[13];
  const double series = ((p23 + r2 * p45) + r4 * (p67 + r2 * p89)) + r8 * (p1011 + r2 * p1213);
  const double er = 1.0 + (hi + (r2 * series - lo));  // e^r in [0.7, 1.42]
  // 2^k: k + 1023 in [1, 2046] placed as a biased exponent. k is taken from the low bits of
  // k + kRoundShift, where the integer sits in the significand (a two's-complement offset).
  const auto k_bits = std::bit_cast<std::uint64_t>(k + kRoundShift) - std::bit_cast<std::uint64_t>(kRoundShift);
  const double scale = std::bit_cast<double>((k_bits + 1023) << 52);
  return er * scale;
}

namespace detail {

// x = 2^k m with m in [sqrt(2)/2, sqrt(2)), for x >= DBL_MIN: returns m - 1 (exact) and sets k.
constexpr double reduce_for_log(double x, double& k) noexcept {
  const auto bits = std::bit_cast<std::uint64_t>(x);
  // Shift the binade boundary from 1 to sqrt(2)/2: adding (1 - 0x3fe6a09e...) to the high bits
  // carries into the exponent exactly when the significand is >= sqrt(2)/2 (as 1.xxx / 2).
  constexpr std::uint64_t kSqrtHalfBits = 0x3fe6a09e00000000ULL;
  constexpr std::uint64_t kOneBits = 0x3ff0000000000000ULL;
  const std::uint64_t shifted = bits + (kOneBits - kSqrtHalfBits);
  const std::uint64_t biased_k = shifted >> 52;  // k + 1023, in [1, 2046]
  const std::uint64_t m_bits = (shifted & 0x000fffffffffffffULL) + kSqrtHalfBits;
  // k as a double without an int64 conversion: biased_k sits in the low bits of 2^52's significand.
  k = (std::bit_cast<double>(std::bit_cast<std::uint64_t>(0x1.0p52) | biased_k) - 0x1.0p52) - 1023.0;
  return std::bit_cast<double>(m_bits) - 1.0;
}

// k ln2 + ln(1 + f) + c for |f| <= sqrt(2) - 1 and a small correction c: ln(1 + f) =
// f - f^2/2 + s (f^2/2 + R(s^2)), s = f / (2 + f), the terms summed small to large.
constexpr double log_of_reduced(double f, double k, double c) noexcept {
  const double s = f / (2.0 + f);
  const double z = s * s;
  const double w = z * z;
  // R = Lg1 z + Lg2 z^2 + ... + Lg7 z^7 by Estrin's scheme: pairs combined with w = z^2, w^2.
  const double r =
      z * (((kLogLg1 + z * kLogLg2) + w * (kLogLg3 + z * kLogLg4)) + (w * w) * ((kLogLg5 + z * kLogLg6) + w * kLogLg7));
  const double half_f_squared = 0.5 * f * f;
  return s * (half_f_squared + r) + (k * kLn2Lo + c) - half_f_squared + f + k * kLn2Hi;
}

}  // namespace detail

// ln x. Reduction x = 2^k m with m in [sqrt(2)/2, sqrt(2)), f = m - 1 (exact).
constexpr double vlog(double x) noexcept {
  double k = 0;
  const double f = detail::reduce_for_log(raise_to(x, detail::kMinNormal), k);
  return detail::log_of_reduced(f, k, 0.0);
}

// ln(1 + t). Where 1 + t needs no scaling (k = 0), t itself is the reduced argument, exactly.
// Elsewhere w = 1 + t rounds; its error e = (1 + t) - w is exact (Fast2Sum, the larger of 1 and
// |t| first) and enters as ln(1 + e/w) ~ e/w among the small terms.
constexpr double vlog1p(double t) noexcept {
  const double w = raise_to(1.0 + t, 0x1.0p-53);
  double k = 0;
  const double f_of_w = detail::reduce_for_log(w, k);
  const bool t_small = (t < 1.0) && (t > -1.0);
  const double error = t_small ? t - (w - 1.0) : 1.0 - (w - t);
  const double correction = error / w;  // computed either way: a loop with no branches vectorizes
  const bool unscaled = k == 0.0;
  return detail::log_of_reduced(unscaled ? t : f_of_w, k, unscaled ? 0.0 : correction);
}

}  // namespace embscale::vmath
