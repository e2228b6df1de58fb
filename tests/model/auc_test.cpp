// AUC (lib/model/auc.hpp) against an independent computation: the Mann-Whitney statistic by
// brute force over every (positive, negative) pair, ties counting one half, on random scores with
// many ties (fixed seeds); its DeLong standard error against the structural components computed
// pair by pair; and the cases with a known answer.
#include "model/auc.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace embscale::model {
namespace {

double brute_force(const std::vector<float>& scores, const std::vector<float>& labels) {
  double wins = 0.0, pairs = 0.0;
  for (std::size_t i = 0; i < scores.size(); ++i) {
    if (labels[i] <= 0.5f) continue;
    for (std::size_t j = 0; j < scores.size(); ++j) {
      if (labels[j] > 0.5f) continue;
      pairs += 1.0;
      wins += scores[i] > scores[j] ? 1.0 : scores[i] == scores[j] ? 0.5 : 0.0;
    }
  }
  return wins / pairs;
}

// DeLong's standard error written out: each positive's and each negative's share of the pairs it
// wins (ties one half), their sample variances, Var = S10 / positives + S01 / negatives.
double brute_force_delong(const std::vector<float>& scores, const std::vector<float>& labels) {
  std::vector<double> v10, v01;
  const double a = brute_force(scores, labels);
  for (std::size_t i = 0; i < scores.size(); ++i) {
    const bool positive = labels[i] > 0.5f;
    double wins = 0.0, pairs = 0.0;
    for (std::size_t j = 0; j < scores.size(); ++j) {
      if ((labels[j] > 0.5f) == positive) continue;
      pairs += 1.0;
      const float mine = scores[i], theirs = scores[j];
      wins += positive ? (mine > theirs    ? 1.0
                          : mine == theirs ? 0.5
                                           : 0.0)
                       : (theirs > mine    ? 1.0
                          : mine == theirs ? 0.5
                                           : 0.0);
    }
    (positive ? v10 : v01).push_back(wins / pairs);
  }
  const auto variance = [a](const std::vector<double>& v) {
    double s = 0.0;
    for (const double x : v) s += (x - a) * (x - a);
    return s / static_cast<double>(v.size() - 1);
  };
  return std::sqrt(variance(v10) / static_cast<double>(v10.size()) + variance(v01) / static_cast<double>(v01.size()));
}

TEST(Auc, EqualsTheMannWhitneyStatisticWithTies) {
  std::mt19937_64 random(20261129);
  for (int trial = 0; trial < 40; ++trial) {
    const std::size_t n = 1 + random() % 600;
    const int levels = 1 + static_cast<int>(random() % 20);  // few levels: many ties
    std::vector<float> scores(n), labels(n);
    int positives = 0;
    for (std::size_t i = 0; i < n; ++i) {
      const int level = static_cast<int>(random() % static_cast<std::uint64_t>(levels));
      // Positives lean to higher scores, so the AUC is away from 1/2.
      const bool positive = random() % 100 < static_cast<std::uint64_t>(30 + 40 * level / levels);
      scores[i] = static_cast<float>(level) * 0.25f - 1.0f;
      labels[i] = positive ? 1.0f : 0.0f;
      positives += positive;
    }
    const Auc got = auc(scores, labels);
    EXPECT_EQ(got.positives, positives);
    EXPECT_EQ(got.negatives, static_cast<std::int64_t>(n) - positives);
    if (positives == 0 || positives == static_cast<int>(n)) {
      EXPECT_TRUE(std::isnan(got.value)) << "trial " << trial;
    } else {
      EXPECT_NEAR(got.value, brute_force(scores, labels), 1e-12) << "trial " << trial << ", n " << n;
      if (positives >= 2 && static_cast<int>(n) - positives >= 2)
        EXPECT_NEAR(got.standard_error, brute_force_delong(scores, labels), 1e-12) << "trial " << trial;
      else EXPECT_TRUE(std::isnan(got.standard_error)) << "trial " << trial;
    }
  }
}

TEST(Auc, KnownCases) {
  EXPECT_DOUBLE_EQ(auc(std::vector<float>{0.1f, 0.2f, 0.8f, 0.9f}, std::vector<float>{0, 0, 1, 1}).value, 1.0);
  EXPECT_DOUBLE_EQ(auc(std::vector<float>{0.9f, 0.8f, 0.2f, 0.1f}, std::vector<float>{0, 0, 1, 1}).value, 0.0);
  EXPECT_DOUBLE_EQ(auc(std::vector<float>{0.5f, 0.5f, 0.5f}, std::vector<float>{0, 1, 1}).value, 0.5);
  // One of two positives above the negative, one tied with it: (1 + 1/2) / 2.
  EXPECT_DOUBLE_EQ(auc(std::vector<float>{0.3f, 0.7f, 0.3f}, std::vector<float>{0, 1, 1}).value, 0.75);
  EXPECT_TRUE(std::isnan(auc(std::vector<float>{0.3f, 0.7f}, std::vector<float>{1, 1}).value));
  EXPECT_TRUE(std::isnan(auc(std::vector<float>{}, std::vector<float>{}).value));
}

// DeLong's error is the AUC's spread over draws of the samples: over 400 independent draws of
// 400 samples from two overlapping normals, the AUC's standard deviation is within 15 % of the
// mean reported error (the spread's own sampling error over 400 draws is about 3.5 %).
TEST(Auc, StandardErrorMatchesTheSpreadOverDraws) {
  std::mt19937_64 random(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<double> values;
  double error_sum = 0.0;
  for (int draw = 0; draw < 400; ++draw) {
    std::vector<float> scores(400), labels(400);
    for (std::size_t i = 0; i < scores.size(); ++i) {
      labels[i] = i % 3 == 0 ? 1.0f : 0.0f;
      scores[i] = normal(random) + (labels[i] > 0.5f ? 1.0f : 0.0f);
    }
    const Auc got = auc(scores, labels);
    values.push_back(got.value);
    error_sum += got.standard_error;
  }
  double mean = 0.0, spread = 0.0;
  for (const double v : values) mean += v / static_cast<double>(values.size());
  for (const double v : values) spread += (v - mean) * (v - mean) / static_cast<double>(values.size() - 1);
  EXPECT_NEAR(std::sqrt(spread) / (error_sum / static_cast<double>(values.size())), 1.0, 0.15);
}

TEST(Auc, RefusesWhatItCannotRank) {
  EXPECT_THROW((void)auc(std::vector<float>{0.1f, NAN}, std::vector<float>{0, 1}), Error);
  EXPECT_THROW((void)auc(std::vector<float>{0.1f, 0.2f}, std::vector<float>{0, INFINITY}), Error);
  EXPECT_THROW((void)auc(std::vector<float>{0.1f}, std::vector<float>{0, 1}), Error);
  try {
    (void)auc(std::vector<float>{0.1f, 0.2f, NAN}, std::vector<float>{0, 1, 0});
    FAIL() << "a NaN score was ranked";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("score 2"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace embscale::model
