#include "model/auc.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "core/error.hpp"

namespace embscale::model {
namespace {

// 2 U is at most 2 x positives x negatives: past 64 bits from about 3 x 10^9 samples.
__extension__ using Wide = unsigned __int128;

void check_finite(std::span<const float> values, const char* what) {
  const auto bad = std::find_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); });
  if (bad != values.end())
    throw Error(std::string("AUC: ") + what + " " + std::to_string(bad - values.begin()) + " is " +
                std::to_string(*bad) + ", expected a finite number");
}

// Samples of one score, by class, in ascending score order.
struct TieGroup {
  std::int64_t positives = 0;
  std::int64_t negatives = 0;
};

std::vector<TieGroup> tie_groups(const std::vector<std::pair<float, bool>>& ranked) {
  std::vector<TieGroup> groups;
  for (std::size_t i = 0; i < ranked.size();) {
    TieGroup g;
    std::size_t end = i;
    for (; end < ranked.size() && ranked[end].first == ranked[i].first; ++end)
      (ranked[end].second ? g.positives : g.negatives) += 1;
    groups.push_back(g);
    i = end;
  }
  return groups;
}

// DeLong's variance from the tie groups: every positive of a group has the same component V10
// (negatives below plus half the tied ones, over all negatives), every negative the same V01
// (positives above plus half the tied ones, over all positives); sums of squared deviations from
// the AUC in long double, a second pass once the AUC is known.
double delong_standard_error(const std::vector<TieGroup>& groups, const Auc& auc) {
  const auto m = static_cast<long double>(auc.positives), n = static_cast<long double>(auc.negatives);
  if (auc.positives < 2 || auc.negatives < 2) return std::numeric_limits<double>::quiet_NaN();
  const long double a = auc.value;
  long double s10 = 0.0L, s01 = 0.0L;
  std::int64_t negatives_below = 0, positives_below = 0;
  for (const auto& g : groups) {
    const auto p = static_cast<long double>(g.positives), q = static_cast<long double>(g.negatives);
    const long double v10 = (static_cast<long double>(negatives_below) + 0.5L * q) / n;
    const long double v01 = (m - static_cast<long double>(positives_below) - p + 0.5L * p) / m;
    s10 += p * (v10 - a) * (v10 - a);
    s01 += q * (v01 - a) * (v01 - a);
    negatives_below += g.negatives;
    positives_below += g.positives;
  }
  const long double variance = s10 / (m - 1.0L) / m + s01 / (n - 1.0L) / n;
  return static_cast<double>(std::sqrt(variance));
}

}  // namespace

Auc auc(std::span<const float> scores, std::span<const float> labels) {
  if (scores.size() != labels.size())
    throw Error("AUC: " + std::to_string(scores.size()) + " scores for " + std::to_string(labels.size()) +
                " labels, expected one each");
  check_finite(scores, "score");
  check_finite(labels, "label");
  std::vector<std::pair<float, bool>> ranked(scores.size());
  for (std::size_t i = 0; i < scores.size(); ++i) ranked[i] = {scores[i], labels[i] > 0.5f};
  std::sort(ranked.begin(), ranked.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  const auto groups = tie_groups(ranked);
  // Walking up the scores: each group of equal scores adds, for its positives, the negatives
  // below it (each pair 1, counted twice) and the negatives tied with it (each pair 1/2, once).
  Wide twice_u = 0;
  std::int64_t negatives_below = 0;
  Auc result;
  for (const auto& g : groups) {
    twice_u += static_cast<Wide>(2 * g.positives) * static_cast<Wide>(negatives_below) +
               static_cast<Wide>(g.positives) * static_cast<Wide>(g.negatives);
    negatives_below += g.negatives;
    result.positives += g.positives;
    result.negatives += g.negatives;
  }
  const long double pairs =
      2.0L * static_cast<long double>(result.positives) * static_cast<long double>(result.negatives);
  result.value = pairs > 0.0L ? static_cast<double>(static_cast<long double>(twice_u) / pairs)
                              : std::numeric_limits<double>::quiet_NaN();
  result.standard_error = delong_standard_error(groups, result);
  return result;
}

Auc global_auc(comm::Communicator& comm, std::span<const float> scores, std::span<const float> labels) {
  if (scores.size() != labels.size())
    throw Error("AUC: " + std::to_string(scores.size()) + " scores for " + std::to_string(labels.size()) +
                " labels on rank " + std::to_string(comm.rank()) + ", expected one each");
  const auto counts = comm.allgather(scores.size());
  const std::size_t total = std::accumulate(counts.begin(), counts.end(), std::size_t{0});
  std::vector<float> all_scores(total), all_labels(total);
  comm.allgatherv(scores, std::span<float>(all_scores), std::span<const std::size_t>(counts));
  comm.allgatherv(labels, std::span<float>(all_labels), std::span<const std::size_t>(counts));
  return auc(all_scores, all_labels);
}

}  // namespace embscale::model
