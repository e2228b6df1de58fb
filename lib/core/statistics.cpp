#include "core/statistics.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "core/error.hpp"

namespace embscale {
namespace {

constexpr std::size_t kExactLimit = 50;

// Counts of rank-sum arrangements: ways[u] = number of ways that b's U equals u under the null
// (all C(na + nb, nb) orderings equally likely), by the recurrence of Mann and Whitney (1947):
// the largest value belongs either to b (adding na to U) or to a.
std::vector<double> exact_u_distribution(std::size_t na, std::size_t nb) {
  // table[i][j] holds the distribution for sizes (i, j); build row by row in j.
  std::vector<std::vector<std::vector<double>>> table(na + 1, std::vector<std::vector<double>>(nb + 1));
  for (std::size_t i = 0; i <= na; ++i)
    for (std::size_t j = 0; j <= nb; ++j) {
      auto& ways = table[i][j];
      ways.assign(i * j + 1, 0.0);
      if (i == 0 || j == 0) {
        ways[0] = 1.0;
        continue;
      }
      const auto& b_largest = table[i][j - 1];  // the largest is b's: it beats all i of a
      const auto& a_largest = table[i - 1][j];
      for (std::size_t u = 0; u < b_largest.size(); ++u) ways[u + i] += b_largest[u];
      for (std::size_t u = 0; u < a_largest.size(); ++u) ways[u] += a_largest[u];
    }
  return table[na][nb];
}

double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::sqrt(2.0)); }

}  // namespace

MannWhitneyResult mann_whitney_u(std::span<const double> a, std::span<const double> b, Alternative alternative) {
  EMBSCALE_EXPECTS(!a.empty() && !b.empty(), "the Mann-Whitney test needs two non-empty samples");
  const std::size_t na = a.size(), nb = b.size(), n = na + nb;
  // Average ranks over the pooled sample (ties share their mean rank).
  std::vector<std::pair<double, bool>> pooled;  // (value, belongs to b)
  for (const double x : a) pooled.emplace_back(x, false);
  for (const double y : b) pooled.emplace_back(y, true);
  std::sort(pooled.begin(), pooled.end(), [](const auto& l, const auto& r) { return l.first < r.first; });
  double rank_sum_b = 0, tie_term = 0;
  bool ties = false;
  for (std::size_t i = 0; i < n;) {
    std::size_t j = i;
    while (j < n && pooled[j].first == pooled[i].first) ++j;
    const double average_rank = (static_cast<double>(i + 1) + static_cast<double>(j)) / 2.0;
    const auto t = static_cast<double>(j - i);
    if (j - i > 1) ties = true;
    tie_term += t * t * t - t;
    for (std::size_t k = i; k < j; ++k)
      if (pooled[k].second) rank_sum_b += average_rank;
    i = j;
  }
  MannWhitneyResult r;
  r.u = rank_sum_b - static_cast<double>(nb) * static_cast<double>(nb + 1) / 2.0;
  const double mean_u = static_cast<double>(na) * static_cast<double>(nb) / 2.0;

  if (!ties && n <= kExactLimit) {
    const auto ways = exact_u_distribution(na, nb);
    const double total = std::accumulate(ways.begin(), ways.end(), 0.0);
    const auto u = static_cast<std::size_t>(std::llround(r.u));
    double upper = 0, lower = 0;  // P(U >= u), P(U <= u)
    for (std::size_t k = 0; k < ways.size(); ++k) {
      if (k >= u) upper += ways[k];
      if (k <= u) lower += ways[k];
    }
    upper /= total;
    lower /= total;
    r.exact = true;
    r.p_value = alternative == Alternative::kGreater ? upper
                : alternative == Alternative::kLess  ? lower
                                                     : std::min(1.0, 2.0 * std::min(upper, lower));
    return r;
  }
  const double nn = static_cast<double>(n);
  const double variance =
      static_cast<double>(na) * static_cast<double>(nb) / 12.0 * ((nn + 1.0) - tie_term / (nn * (nn - 1.0)));
  if (variance <= 0) {  // every value equal: no evidence either way
    r.p_value = 1.0;
    return r;
  }
  const double sd = std::sqrt(variance);
  const double z_greater = (r.u - mean_u - 0.5) / sd;  // continuity correction toward the mean
  const double z_less = (r.u - mean_u + 0.5) / sd;
  const double p_greater = normal_upper_tail(z_greater);
  const double p_less = 1.0 - normal_upper_tail(z_less);
  r.p_value = alternative == Alternative::kGreater ? p_greater
              : alternative == Alternative::kLess  ? p_less
                                                   : std::min(1.0, 2.0 * std::min(p_greater, p_less));
  return r;
}

SignTestResult sign_test(std::span<const double> a, std::span<const double> b, Alternative alternative) {
  EMBSCALE_EXPECTS(a.size() == b.size(), "the sign test pairs samples of one length");
  SignTestResult r;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (b[i] == a[i]) continue;
    ++r.pairs;
    if (b[i] > a[i]) ++r.greater;
  }
  if (r.pairs == 0) return r;
  // P(X = k) for X ~ Binomial(n, 1/2), in logs: exact enough for any count of blocks.
  const auto n = static_cast<double>(r.pairs);
  const auto pmf = [&](std::size_t k) {
    const auto x = static_cast<double>(k);
    return std::exp(std::lgamma(n + 1) - std::lgamma(x + 1) - std::lgamma(n - x + 1) - n * std::log(2.0));
  };
  double at_least = 0, at_most = 0;  // P(X >= greater), P(X <= greater)
  for (std::size_t k = r.greater; k <= r.pairs; ++k) at_least += pmf(k);
  for (std::size_t k = 0; k <= r.greater; ++k) at_most += pmf(k);
  switch (alternative) {
    case Alternative::kGreater: r.p_value = at_least; break;
    case Alternative::kLess: r.p_value = at_most; break;
    case Alternative::kTwoSided: r.p_value = 2 * std::min(at_least, at_most); break;
  }
  r.p_value = std::min(1.0, r.p_value);
  return r;
}

double mann_whitney_smallest_p(std::size_t na, std::size_t nb) {
  double combinations = 1.0;  // C(na + nb, nb), built as a product of ratios (exact while small)
  for (std::size_t i = 1; i <= nb; ++i)
    combinations = combinations * static_cast<double>(na + i) / static_cast<double>(i);
  return 1.0 / combinations;
}

std::vector<double> block_means(std::span<const double> samples, std::size_t skip, std::size_t blocks) {
  EMBSCALE_EXPECTS(blocks >= 1, "block_means needs at least one block");
  const std::size_t usable = samples.size() > skip ? samples.size() - skip : 0;
  if (usable < blocks)
    throw InputError("block means: " + std::to_string(usable) + " samples after a warm-up of " + std::to_string(skip) +
                     " cannot fill " + std::to_string(blocks) + " blocks");
  const std::size_t length = usable / blocks;
  std::vector<double> means(blocks);
  for (std::size_t b = 0; b < blocks; ++b) {
    const auto first = samples.begin() + static_cast<std::ptrdiff_t>(skip + b * length);
    means[b] = std::accumulate(first, first + static_cast<std::ptrdiff_t>(length), 0.0) / static_cast<double>(length);
  }
  return means;
}

std::vector<double> holm_adjusted(std::span<const double> p_values) {
  const std::size_t m = p_values.size();
  std::vector<std::size_t> order(m);
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t l, std::size_t r) { return p_values[l] < p_values[r]; });
  std::vector<double> adjusted(m);
  double running_max = 0.0;  // the step-down: an adjusted p-value never falls below an earlier one
  for (std::size_t k = 0; k < m; ++k) {
    const double scaled = std::min(1.0, static_cast<double>(m - k) * p_values[order[k]]);
    running_max = std::max(running_max, scaled);
    adjusted[order[k]] = running_max;
  }
  return adjusted;
}

double quantile(std::span<const double> values, double q) {
  if (values.empty()) return 0.0;
  std::vector<double> sorted(values.begin(), values.end());
  std::sort(sorted.begin(), sorted.end());
  const double position = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(position));
  const auto hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (position - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

}  // namespace embscale
