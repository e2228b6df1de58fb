// The dense layers' first parameter values, each a pure function of the layer's seed and the
// element's position in the whole (unpartitioned) parameter, so every partitioning and every
// rank count starts from the same model. Internal to lib/model.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>

#include "core/rng.hpp"

namespace embscale::model::layers {

// Which of a layer's parameters a draw is for (a stream of the layer's seed each).
enum class ParameterStream : std::uint64_t { kWeight = 1, kBias = 2 };

// Uniform in [-limit, limit).
inline double uniform_value(std::uint64_t seed, ParameterStream stream, std::uint64_t index, double limit) {
  return (2.0 * CounterRng(seed, static_cast<std::uint64_t>(stream)).uniform(index) - 1.0) * limit;
}

// Normal(0, stddev), by Box-Muller from the counter's two 32-bit halves' block.
inline double normal_value(std::uint64_t seed, ParameterStream stream, std::uint64_t index, double stddev) {
  const auto block = CounterRng(seed, static_cast<std::uint64_t>(stream)).block(index);
  const double u1 = (static_cast<double>(block[0]) + 1.0) * 0x1.0p-32;  // (0, 1]
  const double u2 = static_cast<double>(block[1]) * 0x1.0p-32;          // [0, 1)
  return stddev * std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

// HugeCTR's default for a fully connected layer's weights as it runs (its VarianceScaling with
// fan_avg and a normal: stddev sqrt(2 / (fan_in + fan_out)) / 0.8796, the truncated normal's
// correction, drawn untruncated) and bias (normal, stddev sqrt(1 / fan_out)).
inline double fc_weight_stddev(std::int64_t fan_in, std::int64_t fan_out) {
  return std::sqrt(2.0 / static_cast<double>(fan_in + fan_out)) / 0.87962566103423978;
}
inline double fc_bias_stddev(std::int64_t fan_out) { return std::sqrt(1.0 / static_cast<double>(fan_out)); }

}  // namespace embscale::model::layers
