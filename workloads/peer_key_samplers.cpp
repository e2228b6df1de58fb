#include "workloads/peer_key_samplers.hpp"

#include <cmath>
#include <limits>

#include "core/error.hpp"

namespace embscale::workloads {
namespace {

constexpr std::int64_t kNumpyZipfRanks = std::numeric_limits<std::int64_t>::max();

// A double in [0, 2^64) or beyond as an index in [0, n): values past the last index clamp to it.
std::uint64_t clamped_index(double x, std::uint64_t n) {
  if (!(x > 0.0)) return 0;
  if (x >= static_cast<double>(n - 1)) return n - 1;  // double(n - 1) >= ... keeps the cast in range
  return static_cast<std::uint64_t>(x);
}

}  // namespace

HugeCtrPowerLawKeys::HugeCtrPowerLawKeys(std::uint64_t space, double alpha) : n_(space), one_minus_alpha_(1.0 - alpha) {
  EMBSCALE_EXPECTS(space >= 1, "a key space needs at least one key");
  EMBSCALE_EXPECTS(alpha > 0.0 && alpha != 1.0 && std::isfinite(alpha), "HugeCTR's power law needs alpha > 0, != 1");
  scale_ = std::expm1(one_minus_alpha_ * std::log(static_cast<double>(space)));
}

std::uint64_t HugeCtrPowerLawKeys::draw(RngCursor& rng) const {
  // log1p / expm1 keep y accurate near 1 (the head, where the probability is).
  const double y = std::exp(std::log1p(scale_ * rng.uniform()) / one_minus_alpha_);
  return clamped_index(std::round(y) - 1.0, n_);
}

FbgemmZipfKeys::FbgemmZipfKeys(std::uint64_t space, double alpha)
    : n_(space), uniform_(alpha <= 1.0), uniform_index_(space), zeta_(kNumpyZipfRanks, alpha) {
  EMBSCALE_EXPECTS(space >= 1, "a key space needs at least one key");
}

std::uint64_t FbgemmZipfKeys::draw(RngCursor& rng) const {
  if (uniform_) return uniform_index_(rng);
  return static_cast<std::uint64_t>(zeta_(rng) - 1) % n_;
}

void FbgemmZipfKeys::draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const {
  if (uniform_) return KeySampler::draw_each(cursors, indices);
  zipf_indices(zeta_, cursors, indices);
  for (auto& index : indices) index %= n_;
}

DlrmUniformKeys::DlrmUniformKeys(std::uint64_t space) : n_(space) {
  EMBSCALE_EXPECTS(space >= 1, "a key space needs at least one key");
}

std::uint64_t DlrmUniformKeys::draw(RngCursor& rng) const {
  // nearbyint rounds half to even in the default rounding mode, as numpy's round does.
  return clamped_index(std::nearbyint(rng.uniform() * static_cast<double>(n_ - 1)), n_);
}

double hugectr_alpha(const config::KeySpec& spec) {
  switch (spec.power_law) {
    case config::HugeCtrPowerLaw::kLong: return 0.9;
    case config::HugeCtrPowerLaw::kMedium: return 1.1;
    case config::HugeCtrPowerLaw::kShort: return 1.3;
    case config::HugeCtrPowerLaw::kSpecific: return spec.zipf_alpha;
  }
  return spec.zipf_alpha;
}

SharedSampler make_hugectr_power_law(const config::KeySpec& spec, std::uint64_t space) {
  return std::make_shared<HugeCtrPowerLawKeys>(space, hugectr_alpha(spec));
}

SharedSampler make_fbgemm_zipf(const config::KeySpec& spec, std::uint64_t space) {
  return std::make_shared<FbgemmZipfKeys>(space, spec.zipf_alpha);
}

SharedSampler make_dlrm_uniform(const config::KeySpec&, std::uint64_t space) {
  return std::make_shared<DlrmUniformKeys>(space);
}

}  // namespace embscale::workloads
