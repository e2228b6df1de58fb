#include "core/math.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <numbers>

#include "core/error.hpp"

namespace embscale {
namespace {

TEST(GeneralizedHarmonic, MatchesClosedForms) {
  EXPECT_DOUBLE_EQ(generalized_harmonic(1, 1.3), 1.0);
  EXPECT_NEAR(generalized_harmonic(4, 1.0), 1.0 + 0.5 + 1.0 / 3 + 0.25, 1e-15);
  EXPECT_DOUBLE_EQ(generalized_harmonic(1000, 0.0), 1000.0);
  // H(n, 2) -> pi^2 / 6 with tail ~ 1/n.
  EXPECT_NEAR(generalized_harmonic(1000000, 2.0), std::numbers::pi * std::numbers::pi / 6, 1.1e-6);
}

TEST(ZipfPmf, SumsToOneAndFollowsThePowerLaw) {
  double total = 0;
  for (int k = 1; k <= 500; ++k) total += zipf_pmf(k, 500, 1.05);
  EXPECT_NEAR(total, 1.0, 1e-12);
  EXPECT_NEAR(zipf_pmf(1, 500, 1.05) / zipf_pmf(10, 500, 1.05), std::pow(10.0, 1.05), 1e-9);
  EXPECT_THROW(zipf_pmf(0, 10, 1.0), Error);
}

}  // namespace
}  // namespace embscale
