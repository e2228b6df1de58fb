#include "plan/key_popularity.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/gauss_legendre.hpp"
#include "core/math.hpp"

namespace embscale::plan {
namespace {

// The terms vary on the scale of 1 / s in log-index; 8 nodes per 1/4 of it (as sim/zipf_analytic).
constexpr double kPanel = 0.25;

}  // namespace

double distinct_term(double p, double draws) {
  if (p >= 1.0) return draws > 0.0 ? 1.0 : 0.0;
  return -std::expm1(draws * std::log1p(-p));
}

KeyPopularity KeyPopularity::uniform(std::int64_t keys) {
  EMBSCALE_EXPECTS(keys >= 1, "a popularity needs at least one key");
  KeyPopularity p(keys);
  p.pieces_.push_back({false, 1.0, 0, keys, 0.0, 1.0 / static_cast<double>(keys)});
  return p;
}

KeyPopularity KeyPopularity::zipf(std::int64_t keys, double s) {
  EMBSCALE_EXPECTS(keys >= 1 && s >= 0.0 && std::isfinite(s), "a Zipf popularity needs keys >= 1 and a finite s >= 0");
  KeyPopularity p(keys);
  p.pieces_.push_back({true, 1.0, 0, keys, s, 1.0 / generalized_harmonic(keys, s)});
  return p;
}

bool KeyPopularity::non_increasing() const {
  // Zipf pieces fall and a uniform piece is flat inside its range: P can only rise where a uniform
  // piece starts after index 0 (hotspot's cold keys), so those edges are the ones to check.
  return std::all_of(pieces_.begin(), pieces_.end(), [this](const Piece& piece) {
    return piece.zipf || piece.first == 0 || piece.first >= keys_ ||
           probability(piece.first) <= probability(piece.first - 1);
  });
}

void KeyPopularity::add(const KeyPopularity& other, double weight) {
  for (auto piece : other.pieces_) {
    piece.weight *= weight;
    piece.inverse_norm *= weight;
    pieces_.push_back(piece);
  }
}

std::optional<KeyPopularity> KeyPopularity::of(const config::KeySpec& spec, std::int64_t keys, std::string& why_not) {
  using config::KeyDistribution;
  switch (spec.distribution) {
    case KeyDistribution::kUniform:
    case KeyDistribution::kTorchrecUniform: return uniform(keys);
    case KeyDistribution::kZipf: return zipf(keys, spec.zipf_alpha);
    case KeyDistribution::kHotspot: {
      // workloads' HotspotKeys: round(hot_key_fraction N) hot keys (at least 1), drawn with
      // probability hot_access_fraction; the rest of the draws uniform over the cold keys.
      const long double rounded =
          std::round(static_cast<long double>(spec.hot_key_fraction) * static_cast<long double>(keys));
      const std::int64_t hot = rounded < 1.0L ? 1 : std::min<std::int64_t>(keys, static_cast<std::int64_t>(rounded));
      if (hot == keys) return uniform(keys);
      KeyPopularity p(keys);
      p.pieces_.push_back(
          {false, spec.hot_access_fraction, 0, hot, 0.0, spec.hot_access_fraction / static_cast<double>(hot)});
      p.pieces_.push_back({false, 1.0 - spec.hot_access_fraction, hot, keys, 0.0,
                           (1.0 - spec.hot_access_fraction) / static_cast<double>(keys - hot)});
      return p;
    }
    case KeyDistribution::kMixture: {
      double total = 0.0;
      for (const auto& component : spec.mixture) total += component.weight;
      KeyPopularity p(keys);
      for (const auto& component : spec.mixture) {
        auto part = of(component.keys, keys, why_not);
        if (!part) return std::nullopt;
        p.add(*part, component.weight / total);
      }
      return p;
    }
    default:
      why_not = "key_distribution \"" + config::to_string(spec.distribution) + "\" has no analytic model";
      return std::nullopt;
  }
}

double KeyPopularity::probability(std::int64_t index) const {
  double p = 0.0;
  for (const auto& piece : pieces_) {
    if (piece.zipf) p += std::pow(static_cast<double>(index) + 1.0, -piece.s) * piece.inverse_norm;
    else if (index >= piece.first && index < piece.last) p += piece.inverse_norm;
  }
  return p;
}

double KeyPopularity::density(double x, std::int64_t index) const {
  double p = 0.0;
  for (const auto& piece : pieces_) {
    if (piece.zipf) p += std::pow(x + 1.0, -piece.s) * piece.inverse_norm;
    else if (index >= piece.first && index < piece.last) p += piece.inverse_norm;
  }
  return p;
}

double KeyPopularity::mass(std::int64_t first, std::int64_t last) const {
  EMBSCALE_EXPECTS(first >= 0 && first <= last && last <= keys_, "a mass needs 0 <= first <= last <= keys");
  if (first == last) return 0.0;
  double m = 0.0;
  for (const auto& piece : pieces_) {
    if (piece.zipf) {
      m += power_sum(first + 1, last, piece.s) * piece.inverse_norm;
    } else {
      const auto overlap = std::min(last, piece.last) - std::max(first, piece.first);
      if (overlap > 0) m += static_cast<double>(overlap) * piece.inverse_norm;
    }
  }
  return m;
}

double KeyPopularity::expected_distinct(std::int64_t first, std::int64_t last, double draws) const {
  EMBSCALE_EXPECTS(first >= 0 && first <= last && last <= keys_, "a range needs 0 <= first <= last <= keys");
  double sum = 0.0;
  const std::int64_t direct_end = std::min(last, std::max(first, kDirectIndices));
  // The tail first (smaller terms), split where a uniform piece starts or ends.
  if (direct_end < last) {
    std::vector<std::int64_t> cuts = {direct_end, last};
    for (const auto& piece : pieces_) {
      for (const auto cut : {piece.first, piece.last})
        if (!piece.zipf && cut > direct_end && cut < last) cuts.push_back(cut);
    }
    std::sort(cuts.begin(), cuts.end());
    cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
    for (std::size_t c = 0; c + 1 < cuts.size(); ++c) {
      const std::int64_t lo = cuts[c], hi = cuts[c + 1];
      const auto term = [&](double x) {
        const auto index = std::clamp(static_cast<std::int64_t>(std::llround(x)), lo, hi - 1);
        return distinct_term(density(x, index), draws);
      };
      sum += integrate_log_panels(term, static_cast<double>(lo) - 0.5, static_cast<double>(hi) - 0.5, kPanel);
    }
  }
  for (std::int64_t k = direct_end; k-- > first;) sum += distinct_term(probability(k), draws);
  return sum;
}

std::optional<double> analytic_bag_size(const config::SlotWorkload& workload, std::string& why_not) {
  if (workload.drift.period != 0) why_not = "drift moves its hot keys during the run";
  else if (workload.growth.keys_per_iteration != 0) why_not = "id growth changes its key space during the run";
  else if (workload.multi_hot.companions != config::Companions::kNone)
    why_not = "multi-hot companions make its keys dependent";
  else if (workload.bag_keys != config::BagKeys::kAny)
    why_not = "bag_keys \"" + config::to_string(workload.bag_keys) + "\" removes repeats";
  else if (workload.nnz_distribution == config::NnzDistribution::kDlrm)
    why_not = "DLRM bag sizes depend on the key space";
  if (!why_not.empty()) return std::nullopt;
  if (workload.nnz_distribution == config::NnzDistribution::kUniform)
    return (static_cast<double>(workload.nnz_min) + static_cast<double>(workload.nnz)) / 2.0;
  return static_cast<double>(workload.nnz);
}

}  // namespace embscale::plan
