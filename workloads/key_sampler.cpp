#include "workloads/key_sampler.hpp"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/cursor_lanes.hpp"
#include "core/error.hpp"

namespace embscale::workloads {

void KeySampler::draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const {
  EMBSCALE_EXPECTS(cursors.size() == indices.size(), "draw_each needs one index per cursor");
  for (std::size_t i = 0; i < cursors.size(); ++i) indices[i] = draw(cursors[i]);
}

// The ranks in place of the indices: int64 and uint64 may alias each other, and ranks in [1, N]
// fit both. Index = rank - 1.
void zipf_indices(const ZipfSampler& zipf, std::span<RngCursor> cursors, std::span<std::uint64_t> indices) {
  EMBSCALE_EXPECTS(cursors.size() == indices.size(), "draw_each needs one index per cursor");
  const std::span<std::int64_t> ranks(reinterpret_cast<std::int64_t*>(indices.data()), indices.size());
  zipf.draw_each(cursors, ranks);
  for (auto& index : indices) index -= 1;
}

UniformKeys::UniformKeys(std::uint64_t space) : below_(space) {
  EMBSCALE_EXPECTS(space >= 1, "a key space needs at least one key");
}

namespace {
std::int64_t zipf_ranks(std::uint64_t space) {
  EMBSCALE_EXPECTS(space >= 1 && space <= std::numeric_limits<std::int64_t>::max(),
                   "a Zipf key space holds 1 to 2^63 - 1 keys");
  return static_cast<std::int64_t>(space);
}
}  // namespace

ZipfKeys::ZipfKeys(std::uint64_t space, double exponent) : zipf_(zipf_ranks(space), exponent) {}

void ZipfKeys::draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const {
  zipf_indices(zipf_, cursors, indices);
}

HotspotKeys::HotspotKeys(std::uint64_t space, double hot_key_fraction, double hot_access_fraction)
    : n_(space), hot_access_fraction_(hot_access_fraction) {
  EMBSCALE_EXPECTS(space >= 1, "a key space needs at least one key");
  EMBSCALE_EXPECTS(hot_key_fraction > 0.0 && hot_key_fraction <= 1.0, "hot_key_fraction must be in (0, 1]");
  EMBSCALE_EXPECTS(hot_access_fraction >= 0.0 && hot_access_fraction <= 1.0, "hot_access_fraction must be in [0, 1]");
  // Long double: round(f N) for N near 2^63 without losing the low bits of N first.
  const long double hot = std::round(static_cast<long double>(hot_key_fraction) * static_cast<long double>(space));
  hot_ = hot < 1.0L ? 1 : (hot >= static_cast<long double>(space) ? space : static_cast<std::uint64_t>(hot));
  hot_index_ = UniformBelow(hot_);
  if (hot_ < n_) cold_index_ = UniformBelow(n_ - hot_);
}

std::uint64_t HotspotKeys::draw(RngCursor& rng) const {
  if (hot_ == n_ || rng.uniform() < hot_access_fraction_) return hot_index_(rng);
  return hot_ + cold_index_(rng);
}

MixtureKeys::MixtureKeys(std::vector<std::pair<double, SharedSampler>> weighted_components) {
  EMBSCALE_EXPECTS(!weighted_components.empty(), "a mixture needs at least one component");
  n_ = weighted_components.front().second->space();
  double largest = 0.0;
  for (const auto& [weight, sampler] : weighted_components) {
    EMBSCALE_EXPECTS(weight > 0.0 && std::isfinite(weight), "mixture weights must be finite and > 0");
    EMBSCALE_EXPECTS(sampler->space() == n_, "a mixture's components must share one key space");
    largest = std::max(largest, weight);
  }
  // Weights relative to the largest: the sum cannot overflow (three weights of 1e308 would).
  double total = 0.0;
  for (const auto& [weight, sampler] : weighted_components) total += weight / largest;
  double running = 0.0;
  for (auto& [weight, sampler] : weighted_components) {
    running += weight / largest;
    cumulative_.push_back(running / total);
    components_.push_back(std::move(sampler));
  }
  cumulative_.back() = 1.0;  // a uniform draw in [0, 1) always finds a component
}

std::size_t MixtureKeys::component(double u) const noexcept {
  std::size_t i = 0;
  while (u >= cumulative_[i]) ++i;  // few components: a scan beats a binary search
  return i;
}

std::uint64_t MixtureKeys::draw(RngCursor& rng) const { return components_[component(rng.uniform())]->draw(rng); }

void MixtureKeys::draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const {
  EMBSCALE_EXPECTS(cursors.size() == indices.size(), "draw_each needs one index per cursor");
  if (cursors.empty()) return;
  // Each draw picks its component (one uniform); the draws are then sorted by component (a
  // counting sort), each component's run goes through its batch path, and back to their places.
  std::vector<double> uniforms(cursors.size());
  draw_uniforms(cursors, uniforms);
  std::vector<std::uint32_t> picked(cursors.size());
  std::vector<std::size_t> run_start(components_.size() + 1, 0);
  for (std::size_t i = 0; i < cursors.size(); ++i) {
    picked[i] = static_cast<std::uint32_t>(component(uniforms[i]));
    ++run_start[picked[i] + 1];
  }
  for (std::size_t c = 0; c < components_.size(); ++c) run_start[c + 1] += run_start[c];
  std::vector<std::size_t> order(cursors.size());  // order[j]: the draw at sorted position j
  std::vector<std::size_t> fill = run_start;
  for (std::size_t i = 0; i < cursors.size(); ++i) order[fill[picked[i]]++] = i;
  std::vector<RngCursor> sorted;
  sorted.reserve(cursors.size());
  for (const std::size_t i : order) sorted.push_back(cursors[i]);
  std::vector<std::uint64_t> drawn(cursors.size());
  for (std::size_t c = 0; c < components_.size(); ++c) {
    const std::size_t first = run_start[c], count = run_start[c + 1] - first;
    components_[c]->draw_each(std::span(sorted).subspan(first, count), std::span(drawn).subspan(first, count));
  }
  for (std::size_t j = 0; j < order.size(); ++j) {
    cursors[order[j]] = sorted[j];
    indices[order[j]] = drawn[j];
  }
}

RotatedKeys::RotatedKeys(SharedSampler base, std::uint64_t offset) : base_(std::move(base)), offset_(offset) {
  EMBSCALE_EXPECTS(offset < base_->space(), "a rotation offset must be below the key space");
}

void RotatedKeys::draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const {
  base_->draw_each(cursors, indices);
  for (auto& index : indices) index = rotate(index);
}

void MirroredKeys::draw_each(std::span<RngCursor> cursors, std::span<std::uint64_t> indices) const {
  base_->draw_each(cursors, indices);
  for (auto& index : indices) index = base_->space() - 1 - index;
}

}  // namespace embscale::workloads
