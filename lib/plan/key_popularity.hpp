// KeyPopularity: the probability of each key index of a slot under its generator, exactly, as the
// planner needs it to predict per-rank loads before anything runs. A popularity is a weighted sum
// of pieces, each a Zipf law over the whole slot (P(index k) ~ (k + 1)^-s, workloads' "zipf") or a
// uniform law over an index range ("uniform", "torchrec_uniform", the two halves of "hotspot");
// "mixture" adds its components' pieces. The other generators (and drift, id growth, multi-hot
// companions, bags without repeats) have no model here: `of` says which field stops it.
//
// Every sum is O(1) in the slot's size: indices below kDirectIndices are summed term by term; past
// them the terms are smooth in the index, and sum_{k=lo}^{hi-1} f(k) is taken as the integral of f
// over [lo - 1/2, hi - 1/2] (the midpoint rule: relative error s (s + 1) / (24 k^2) < 1e-9 there),
// by Gauss-Legendre in log-index panels, split where a uniform piece starts or ends.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/synthetic_source.hpp"

namespace embscale::plan {

inline constexpr std::int64_t kDirectIndices = std::int64_t{1} << 16;

class KeyPopularity {
 public:
  static KeyPopularity uniform(std::int64_t keys);
  static KeyPopularity zipf(std::int64_t keys, double s);
  // The model of `spec` over a slot of `keys` indices; nullopt when the distribution has none, with
  // the reason in `why_not` ("key_distribution \"hugectr_power_law\" has no analytic model").
  static std::optional<KeyPopularity> of(const config::KeySpec& spec, std::int64_t keys, std::string& why_not);

  std::int64_t keys() const noexcept { return keys_; }
  // P(index), 0 <= index < keys.
  double probability(std::int64_t index) const;
  // P(first <= index < last), 0 <= first <= last <= keys.
  double mass(std::int64_t first, std::int64_t last) const;
  // The expected number of distinct indices of [first, last) among `draws` independent draws:
  // sum over the range of 1 - (1 - p_k)^draws.
  double expected_distinct(std::int64_t first, std::int64_t last, double draws) const;
  // Whether P(index) never grows with the index, so that the k most popular indices are [0, k)
  // (Zipf, uniform, a hotspot whose hot keys are hotter than its cold ones, mixtures of them).
  bool non_increasing() const;

 private:
  struct Piece {
    bool zipf = false;
    double weight = 1.0;
    std::int64_t first = 0, last = 0;  // uniform: the range; zipf: [0, keys)
    double s = 0.0;
    double inverse_norm = 0.0;  // zipf: weight / H(keys, s); uniform: weight / (last - first)
  };
  explicit KeyPopularity(std::int64_t keys) : keys_(keys) {}
  void add(const KeyPopularity& other, double weight);
  // p at a real index x of the tail; `index` (the integer x rounds to) decides which uniform
  // pieces cover it.
  double density(double x, std::int64_t index) const;

  std::int64_t keys_ = 0;
  std::vector<Piece> pieces_;
};

// 1 - (1 - p)^draws: the chance that a key of probability p is among `draws` independent draws
// (without cancellation where p draws is small).
double distinct_term(double p, double draws);

// The mean keys of a bag of `workload` (fixed: nnz; uniform sizes: (nnz_min + nnz) / 2), and
// whether its bags are independent draws of its popularity with nothing else moving it (no drift,
// growth, companions, or repeats removed): else nullopt, with the field that stops it.
std::optional<double> analytic_bag_size(const config::SlotWorkload& workload, std::string& why_not);

}  // namespace embscale::plan
