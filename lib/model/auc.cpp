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
  // Walking up the scores: each group of equal scores adds, for its positives, the negatives
  // below it (each pair 1, counted twice) and the negatives tied with it (each pair 1/2, once).
  Wide twice_u = 0;
  std::int64_t negatives_below = 0;
  Auc result;
  for (std::size_t i = 0; i < ranked.size();) {
    std::size_t end = i;
    std::int64_t p = 0, n = 0;
    for (; end < ranked.size() && ranked[end].first == ranked[i].first; ++end) (ranked[end].second ? p : n) += 1;
    twice_u +=
        static_cast<Wide>(2 * p) * static_cast<Wide>(negatives_below) + static_cast<Wide>(p) * static_cast<Wide>(n);
    negatives_below += n;
    result.positives += p;
    result.negatives += n;
    i = end;
  }
  const long double pairs =
      2.0L * static_cast<long double>(result.positives) * static_cast<long double>(result.negatives);
  result.value = pairs > 0.0L ? static_cast<double>(static_cast<long double>(twice_u) / pairs)
                              : std::numeric_limits<double>::quiet_NaN();
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
