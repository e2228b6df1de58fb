#include "workloads/key_source.hpp"

#include <cmath>
#include <utility>

#include "core/error.hpp"
#include "workloads/peer_key_samplers.hpp"

namespace embscale::workloads {
namespace {

using config::KeyDistribution;
using config::KeySpec;

SharedSampler make_uniform(const KeySpec&, std::uint64_t n) { return std::make_shared<UniformKeys>(n); }
SharedSampler make_zipf(const KeySpec& s, std::uint64_t n) { return std::make_shared<ZipfKeys>(n, s.zipf_alpha); }
SharedSampler make_hotspot(const KeySpec& s, std::uint64_t n) {
  return std::make_shared<HotspotKeys>(n, s.hot_key_fraction, s.hot_access_fraction);
}
SharedSampler make_mixture(const KeySpec& s, std::uint64_t n) {
  std::vector<std::pair<double, SharedSampler>> components;
  for (const auto& c : s.mixture) {
    EMBSCALE_EXPECTS(c.keys.distribution != KeyDistribution::kMixture, "a mixture's component cannot be a mixture");
    components.emplace_back(c.weight, make_key_sampler(c.keys, n));
  }
  return std::make_shared<MixtureKeys>(std::move(components));
}

const std::vector<KeyDistributionEntry> kRegistry = {
    {KeyDistribution::kUniform, "uniform", "every key equally likely", make_uniform},
    {KeyDistribution::kZipf, "zipf", "P(k) ~ (k + 1)^-zipf_alpha over the slot's keys, exact", make_zipf},
    {KeyDistribution::kHotspot, "hotspot",
     "hot_access_fraction of draws uniform on the first hot_key_fraction of keys, the rest on the others",
     make_hotspot},
    {KeyDistribution::kMixture, "mixture", "one of the \"mixture\" components, chosen by weight", make_mixture},
    {KeyDistribution::kHugeCtrPowerLaw, "hugectr_power_law",
     "HugeCTR's data generator: a continuous power law on [1, N] rounded, power_law long 0.9, medium 1.1, short 1.3 "
     "or specific (zipf_alpha)",
     make_hugectr_power_law},
    {KeyDistribution::kFbgemmZipf, "fbgemm_zipf",
     "FBGEMM's benchmark requests: numpy's Zipf(zipf_alpha) folded (x - 1) % N; uniform at zipf_alpha <= 1",
     make_fbgemm_zipf},
    {KeyDistribution::kDlrmUniform, "dlrm_uniform",
     "DLRM's random input: round(u (N - 1)), the end keys half as likely", make_dlrm_uniform},
    {KeyDistribution::kTorchrecUniform, "torchrec_uniform", "TorchRec's RandomRecDataset: randint(0, N)", make_uniform},
};

class StationaryKeySource final : public KeySource {
 public:
  explicit StationaryKeySource(SharedSampler sampler) : sampler_(std::move(sampler)) {}
  std::uint64_t space() const noexcept override { return sampler_->space(); }
  SharedSampler sampler_at(std::int64_t) const override { return sampler_; }

 private:
  SharedSampler sampler_;
};

// The distribution over the ids that exist at the iteration, the newest or the oldest hottest.
class GrowingKeySource final : public KeySource {
 public:
  GrowingKeySource(const config::KeySpec& keys, const config::GrowthSpec& growth, std::uint64_t space)
      : keys_(keys), growth_(growth), space_(space) {}
  std::uint64_t space() const noexcept override { return space_; }
  SharedSampler sampler_at(std::int64_t iteration) const override {
    auto sampler = make_key_sampler(keys_, grown_space(growth_, space_, iteration));
    if (growth_.hot == config::GrowthOrder::kNewestHot) return std::make_shared<MirroredKeys>(std::move(sampler));
    return sampler;
  }

 private:
  config::KeySpec keys_;
  config::GrowthSpec growth_;
  std::uint64_t space_;
};

// The inner source's sampler rotated by the iteration's drift offset (within its current space).
class DriftingKeySource final : public KeySource {
 public:
  DriftingKeySource(std::unique_ptr<const KeySource> inner, const config::DriftSpec& drift)
      : inner_(std::move(inner)), drift_(drift) {}
  std::uint64_t space() const noexcept override { return inner_->space(); }
  SharedSampler sampler_at(std::int64_t iteration) const override {
    auto sampler = inner_->sampler_at(iteration);
    const std::uint64_t offset = drift_offset(drift_, sampler->space(), iteration);
    if (offset == 0) return sampler;
    return std::make_shared<RotatedKeys>(std::move(sampler), offset);
  }

 private:
  std::unique_ptr<const KeySource> inner_;
  config::DriftSpec drift_;
};

}  // namespace

const std::vector<KeyDistributionEntry>& key_distribution_registry() { return kRegistry; }

const KeyDistributionEntry& key_distribution(config::KeyDistribution id) {
  const auto index = static_cast<std::size_t>(id);
  EMBSCALE_EXPECTS(index < kRegistry.size() && kRegistry[index].id == id,
                   "the registry lists every key distribution in the enum's order");
  return kRegistry[index];
}

SharedSampler make_key_sampler(const config::KeySpec& spec, std::uint64_t space) {
  return key_distribution(spec.distribution).make(spec, space);
}

std::uint64_t grown_space(const config::GrowthSpec& growth, std::uint64_t space, std::int64_t iteration) {
  EMBSCALE_EXPECTS(iteration >= 0, "iterations count from 0");
  if (growth.keys_per_iteration == 0) return space;
  const UInt128 grown = static_cast<UInt128>(growth.initial_keys) +
                        static_cast<UInt128>(growth.keys_per_iteration) * static_cast<std::uint64_t>(iteration);
  return grown < space ? static_cast<std::uint64_t>(grown) : space;
}

std::uint64_t drift_offset(const config::DriftSpec& drift, std::uint64_t space, std::int64_t iteration) {
  EMBSCALE_EXPECTS(iteration >= 0, "iterations count from 0");
  if (drift.period == 0 || space <= 1) return 0;
  // Keys the hot set moves per period (long double: the fraction of a space near 2^63).
  const auto shift =
      static_cast<std::uint64_t>(std::round(static_cast<long double>(drift.shift) * static_cast<long double>(space)));
  const auto it = static_cast<std::uint64_t>(iteration);
  const auto period = static_cast<std::uint64_t>(drift.period);
  const UInt128 moved = drift.mode == config::DriftMode::kAbrupt
                            ? static_cast<UInt128>(shift) * (it / period)
                            : static_cast<UInt128>(shift) * it / period;  // shift it / period, floored
  return static_cast<std::uint64_t>(moved % space);
}

std::unique_ptr<const KeySource> make_key_source(const config::SlotWorkload& workload, std::uint64_t space) {
  std::unique_ptr<const KeySource> source;
  if (workload.growth.keys_per_iteration > 0)
    source = std::make_unique<GrowingKeySource>(workload.keys, workload.growth, space);
  else source = std::make_unique<StationaryKeySource>(make_key_sampler(workload.keys, space));
  if (workload.drift.period > 0) source = std::make_unique<DriftingKeySource>(std::move(source), workload.drift);
  return source;
}

}  // namespace embscale::workloads
