#include "workloads/planted_labels.hpp"

#include <cmath>
#include <numbers>

#include "core/hash.hpp"
#include "core/rng.hpp"

namespace embscale::workloads {
namespace {

// The model's streams (a domain of the seed each).
constexpr std::uint64_t kKeyValues = 0x9e1a;
constexpr std::uint64_t kDenseWeights = 0x9e1b;
constexpr std::uint64_t kDraws = 0x9e1c;

// N(0, 1) from one Philox block, Box-Muller.
double standard_normal(std::uint64_t seed, std::uint64_t stream, std::uint64_t counter) {
  const auto block = CounterRng(seed, stream).block(counter);
  const double u1 = (static_cast<double>(block[0]) + 1.0) * 0x1.0p-32;  // (0, 1]
  const double u2 = static_cast<double>(block[1]) * 0x1.0p-32;
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

}  // namespace

double PlantedLabels::key_value(Key key) const {
  return standard_normal(seed_, kKeyValues, static_cast<std::uint64_t>(key));
}

double PlantedLabels::dense_weight(std::int32_t d) const {
  return standard_normal(seed_, kDenseWeights, static_cast<std::uint64_t>(d));
}

double PlantedLabels::logit(const Batch& batch, std::int64_t s) const {
  double keys = 0.0;
  for (std::int32_t j = 0; j < batch.num_slots; ++j) {
    const auto bag = batch.bag(s * batch.num_slots + j);
    if (bag.empty()) continue;
    double sum = 0.0;
    for (const Key k : bag) sum += key_value(k);
    keys += sum / static_cast<double>(bag.size());
  }
  double dense = 0.0;
  for (std::int32_t d = 0; d < batch.dense_dim; ++d)
    dense += dense_weight(d) * std::sqrt(12.0) *
             (static_cast<double>(batch.dense[static_cast<std::size_t>(s * batch.dense_dim + d)]) - 0.5);
  double z = model_.bias;
  if (batch.num_slots > 0) z += model_.key_scale * keys / std::sqrt(static_cast<double>(batch.num_slots));
  if (batch.dense_dim > 0) z += model_.dense_scale * dense / std::sqrt(static_cast<double>(batch.dense_dim));
  return z;
}

float PlantedLabels::draw(std::uint64_t sample, std::int32_t l, std::int32_t label_dim, double z) const {
  const double p = 1.0 / (1.0 + std::exp(-z));
  const double u = CounterRng(hash_combine(seed_, kDraws), 0)
                       .uniform(sample * static_cast<std::uint64_t>(label_dim) + static_cast<std::uint64_t>(l));
  return u < p ? 1.0f : 0.0f;
}

}  // namespace embscale::workloads
