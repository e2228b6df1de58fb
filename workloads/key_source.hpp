// Key sources: one slot's key distribution over time, built from the config's SlotWorkload.
//
//   key_distribution (by name, the registry below) ─► growth (the ids that exist at iteration i)
//     ─► drift (the hot set rotated by the iteration's offset) ─► sampler_at(i)
//
// A stationary source hands out one shared sampler; growth and drift build the iteration's
// sampler on demand (O(1): every sampler's set-up is independent of N). The generator asks once
// per slot and batch, never per key.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "config/synthetic_source.hpp"
#include "workloads/key_sampler.hpp"

namespace embscale::workloads {

// A key distribution registered by name: the config's "key_distribution" value, a line for
// `embscale validate` and the docs, and how to build it over a key space of N keys.
struct KeyDistributionEntry {
  config::KeyDistribution id;
  std::string_view name;
  std::string_view summary;
  SharedSampler (*make)(const config::KeySpec& spec, std::uint64_t space);
};

// Every distribution, in the order of config::KeyDistribution.
const std::vector<KeyDistributionEntry>& key_distribution_registry();
const KeyDistributionEntry& key_distribution(config::KeyDistribution id);

// The spec's distribution over [0, space).
SharedSampler make_key_sampler(const config::KeySpec& spec, std::uint64_t space);

class KeySource {
 public:
  virtual ~KeySource() = default;
  // The slot's key space N: every sampler it hands out draws below it.
  virtual std::uint64_t space() const noexcept = 0;
  // The distribution of the keys of iteration `iteration` (>= 0).
  virtual SharedSampler sampler_at(std::int64_t iteration) const = 0;
};

// The source a slot's workload describes (key distribution, growth, drift) over `space` keys.
std::unique_ptr<const KeySource> make_key_source(const config::SlotWorkload& workload, std::uint64_t space);

// The ids that exist at `iteration` under id growth: min(N, initial + per_iteration * iteration).
std::uint64_t grown_space(const config::GrowthSpec& growth, std::uint64_t space, std::int64_t iteration);
// The rotation of the hot set at `iteration` under drift, in [0, space).
std::uint64_t drift_offset(const config::DriftSpec& drift, std::uint64_t space, std::int64_t iteration);

}  // namespace embscale::workloads
