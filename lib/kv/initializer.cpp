#include "kv/initializer.hpp"

#include <algorithm>
#include <cmath>

#include "core/rng.hpp"

namespace embscale::kv {
namespace {

double normal_cdf(double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The standard normal quantile, Acklam's rational approximation (relative error < 1.2e-9),
// refined by one Halley step on erfc.
double normal_quantile(double p) {
  static constexpr double a[] = {-3.969683028665376e+01, 2.209460984245205e+02,  -2.759285104469687e+02,
                                 1.383577518672690e+02,  -3.066479806614716e+01, 2.506628277459239e+00};
  static constexpr double b[] = {-5.447609879822406e+01, 1.615858368580409e+02, -1.556989798598866e+02,
                                 6.680131188771972e+01, -1.328068155288572e+01};
  static constexpr double c[] = {-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e+00,
                                 -2.549732539343734e+00, 4.374664141464968e+00,  2.938163982698783e+00};
  static constexpr double d[] = {7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e+00,
                                 3.754408661907416e+00};
  p = std::clamp(p, 1e-300, 1.0 - 1e-16);
  double x;
  if (p < 0.02425) {
    const double q = std::sqrt(-2.0 * std::log(p));
    x = (((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  } else if (p <= 1.0 - 0.02425) {
    const double q = p - 0.5, r = q * q;
    x = (((((a[0] * r + a[1]) * r + a[2]) * r + a[3]) * r + a[4]) * r + a[5]) * q /
        (((((b[0] * r + b[1]) * r + b[2]) * r + b[3]) * r + b[4]) * r + 1.0);
  } else {
    const double q = std::sqrt(-2.0 * std::log(1.0 - p));
    x = -(((((c[0] * q + c[1]) * q + c[2]) * q + c[3]) * q + c[4]) * q + c[5]) /
        ((((d[0] * q + d[1]) * q + d[2]) * q + d[3]) * q + 1.0);
  }
  const double e = normal_cdf(x) - p;
  const double u = e * std::sqrt(2.0 * 3.141592653589793) * std::exp(x * x / 2.0);
  return x - u / (1.0 + x * u / 2.0);
}

}  // namespace

void initial_row(const InitializerArgs& args, std::uint64_t seed, std::int64_t num_embeddings, std::uint64_t key,
                 std::int64_t dim, std::span<float> out) noexcept {
  for (std::size_t i = static_cast<std::size_t>(dim); i < out.size(); ++i) {  // the optimizer state
    const std::size_t s = i - static_cast<std::size_t>(dim);
    out[i] = s < args.initial_state.size() ? args.initial_state[s] : 0.0f;
  }
  const CounterRng rng(seed, key);
  double lower = args.lower, upper = args.upper;
  if (lower == 0.0 && upper == 0.0) {
    upper = 1.0 / std::sqrt(static_cast<double>(num_embeddings));
    lower = -upper;
  }
  std::uint64_t counter = 0;
  const auto normal = [&] {  // Box-Muller on two uniforms of the key's stream
    const double u1 = std::max(rng.uniform(counter++), 1e-300);
    const double u2 = rng.uniform(counter++);
    return args.mean + args.std_dev * std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  };
  if (args.mode == InitializerMode::kUniform) {
    // The common case, at every table creation and first insert: value d from lane d % 4 of
    // Philox block d / 4 (24 random bits each), a quarter of the blocks one value per block costs.
    for (std::size_t d = 0; d < static_cast<std::size_t>(dim); d += 4) {
      const PhiloxBlock block = rng.block(d / 4);
      for (std::size_t lane = 0; lane < 4 && d + lane < static_cast<std::size_t>(dim); ++lane)
        out[d + lane] =
            static_cast<float>(lower + (upper - lower) * CounterRng::uniform_float(block, static_cast<int>(lane)));
    }
    return;
  }
  for (std::size_t d = 0; d < static_cast<std::size_t>(dim); ++d) {
    double v = 0.0;
    switch (args.mode) {
      case InitializerMode::kUniform: break;  // above
      case InitializerMode::kNormal: v = normal(); break;
      case InitializerMode::kTruncatedNormal: {
        // Inverse-CDF sampling inside [lower, upper]: exact in distribution and O(1) however
        // narrow the bounds (rejection would need ~sqrt(num_embeddings) draws per value).
        const double lo = normal_cdf((lower - args.mean) / args.std_dev);
        const double hi = normal_cdf((upper - args.mean) / args.std_dev);
        v = std::clamp(args.mean + args.std_dev * normal_quantile(lo + (hi - lo) * rng.uniform(counter++)), lower,
                       upper);
        break;
      }
      case InitializerMode::kConstant: v = args.value; break;
      case InitializerMode::kDebug:
        v = static_cast<double>(static_cast<std::int64_t>(key)) + static_cast<double>(d) / 1000.0;
        break;
    }
    out[d] = static_cast<float>(v);
  }
}

}  // namespace embscale::kv
