// A new key's initial row, written once for the host (kv/initializer.cpp's initial_row runs on
// it) and the device (the GPU table's find_or_insert): value d of the row is a pure function of
// (seed, key, d), so a tile's lanes compute their own values and any device or rank computes the
// same row. The modes and bounds are kv/table_options.hpp's InitializerArgs.
//
// Bit for bit: UNIFORM, CONSTANT and DEBUG give the host's floats exactly on the device (Philox
// is integer arithmetic; products and sums go through mul_rn / add_rn, never fused). NORMAL and
// TRUNCATED_NORMAL go through log, cos, erfc and exp, which glibc rounds to within half an ulp
// and CUDA's math library to within 1-2 ulp of the double: a device's value can differ from the
// host's in the float's last bit (tests/gpu holds it to one float ulp).
#pragma once

#include <math.h>

#include <cstdint>

#include "core/rng.hpp"
#include "kv/portable/host_device.hpp"
#include "kv/table_options.hpp"

namespace embscale::kv::portable {

// The initializer of one table, bounds resolved (lower = upper = 0 means -+1/sqrt(num_embeddings)
// for UNIFORM and TRUNCATED_NORMAL, resolved on the host by kv/initializer.hpp's
// initializer_ref). The optimizer state's initial values are an array where the rows live.
struct InitializerRef {
  InitializerMode mode = InitializerMode::kUniform;
  double mean = 0.0, std_dev = 1.0, lower = 0.0, upper = 0.0, value = 0.0;
  const float* initial_state = nullptr;  // state value s is initial_state[s], 0 past state_size
  std::uint32_t state_size = 0;
  std::uint32_t dim = 0;
  std::uint64_t seed = 0;
};

namespace initializer_detail {

EMBSCALE_HD inline double clamp(double x, double lo, double hi) { return x < lo ? lo : (hi < x ? hi : x); }

EMBSCALE_HD inline double normal_cdf(double x) { return 0.5 * ::erfc(-x / ::sqrt(2.0)); }

// The standard normal quantile, Acklam's rational approximation (relative error < 1.2e-9),
// refined by one Halley step on erfc.
EMBSCALE_HD inline double normal_quantile(double p) {
  constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                          1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02, 6.680131188771972e+01,
                          -1.328068155288572e+01};
  constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                          -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00, 3.754408661907416e+00};
  p = clamp(p, 1e-300, 1.0 - 1e-16);
  double x;
  if (p < 0.02425) {
    const double q = ::sqrt(-2.0 * ::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - 0.02425) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    const double q = ::sqrt(-2.0 * ::log(1.0 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * ::sqrt(2.0 * 3.141592653589793) * ::exp(x * x / 2.0);
  return x - u / (1.0 + x * u / 2.0);
}

}  // namespace initializer_detail

// UNIFORM's value from word `lane` of a Philox block: lower + (upper - lower) u, u with 24 bits.
EMBSCALE_HD inline float uniform_initial_value(const InitializerRef& r, const PhiloxBlock& block, int lane) {
  return static_cast<float>(add_rn(r.lower, mul_rn(r.upper - r.lower, CounterRng::uniform_float(block, lane))));
}

// Value d of key's initial row: d < dim from the mode (UNIFORM: word d % 4 of Philox block d / 4;
// NORMAL: Box-Muller on the stream's draws 2d and 2d + 1; TRUNCATED_NORMAL: inverse-CDF sampling
// inside [lower, upper] on draw d, exact in distribution and O(1) however narrow the bounds), the
// optimizer state's initial value after it.
EMBSCALE_HD inline float initial_value(const InitializerRef& r, std::uint64_t key, std::uint32_t d) {
  using namespace initializer_detail;
  if (d >= r.dim) {
    const std::uint32_t s = d - r.dim;
    return s < r.state_size ? r.initial_state[s] : 0.0f;
  }
  const CounterRng rng(r.seed, key);
  switch (r.mode) {
    case InitializerMode::kUniform: return uniform_initial_value(r, rng.block(d / 4), static_cast<int>(d % 4));
    case InitializerMode::kNormal: {
      const double u1 = rng.uniform(2 * std::uint64_t{d});
      const double u2 = rng.uniform(2 * std::uint64_t{d} + 1);
      const double radius = ::sqrt(-2.0 * ::log(u1 > 1e-300 ? u1 : 1e-300));
      return static_cast<float>(
          add_rn(r.mean, mul_rn(mul_rn(r.std_dev, radius), ::cos(mul_rn(6.283185307179586, u2)))));
    }
    case InitializerMode::kTruncatedNormal: {
      const double lo = normal_cdf((r.lower - r.mean) / r.std_dev);
      const double hi = normal_cdf((r.upper - r.mean) / r.std_dev);
      const double p = add_rn(lo, mul_rn(hi - lo, rng.uniform(d)));
      return static_cast<float>(clamp(add_rn(r.mean, mul_rn(r.std_dev, normal_quantile(p))), r.lower, r.upper));
    }
    case InitializerMode::kConstant: return static_cast<float>(r.value);
    case InitializerMode::kDebug:
      return static_cast<float>(static_cast<double>(static_cast<std::int64_t>(key)) + static_cast<double>(d) / 1000.0);
  }
  return 0.0f;
}

}  // namespace embscale::kv::portable
