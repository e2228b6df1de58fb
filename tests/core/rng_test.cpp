#include "core/rng.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace embscale {
namespace {

// Known-answer vectors of Random123 (kat_vectors, philox4x32 with 10 rounds).
TEST(Philox4x32, MatchesRandom123KnownAnswers) {
  EXPECT_EQ(philox4x32_10({0, 0, 0, 0}, {0, 0}), (PhiloxBlock{0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u}));
  EXPECT_EQ(philox4x32_10({0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu}, {0xffffffffu, 0xffffffffu}),
            (PhiloxBlock{0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu}));
  EXPECT_EQ(philox4x32_10({0x243f6a88u, 0x85a308d3u, 0x13198a2eu, 0x03707344u}, {0xa4093822u, 0x299f31d0u}),
            (PhiloxBlock{0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u}));
}

TEST(CounterRng, IsAPureFunctionOfSeedStreamAndCounter) {
  const CounterRng a(42, 7), b(42, 7);
  for (std::uint64_t c : {0ULL, 1ULL, 1000ULL, 1ULL << 40}) EXPECT_EQ(a.bits64(c), b.bits64(c));
  EXPECT_NE(CounterRng(42, 7).bits64(0), CounterRng(43, 7).bits64(0));
  EXPECT_NE(CounterRng(42, 7).bits64(0), CounterRng(42, 8).bits64(0));
  EXPECT_NE(CounterRng(42, 7).bits64(0), CounterRng(42, 7).bits64(1));
}

TEST(CounterRng, UniformHasTheMomentsOfU01) {
  const CounterRng rng(2026, 1);
  constexpr int kN = 200000;
  double sum = 0, sum_sq = 0;
  for (int i = 0; i < kN; ++i) {
    const double u = rng.uniform(static_cast<std::uint64_t>(i));
    ASSERT_GE(u, 0.0);
    ASSERT_LT(u, 1.0);
    sum += u;
    sum_sq += u * u;
  }
  // Mean 1/2 and variance 1/12; 6 standard errors of the estimators.
  EXPECT_NEAR(sum / kN, 0.5, 6 * std::sqrt(1.0 / 12 / kN));
  EXPECT_NEAR(sum_sq / kN - (sum / kN) * (sum / kN), 1.0 / 12, 6 * std::sqrt(1.0 / 180 / kN));
}

// unit_interval builds (bits >> 11) 2^-53 without a conversion instruction: the same double as
// the plain conversion, at the extremes, at every single-bit value and on random words.
TEST(CounterRng, UnitIntervalIsTheTop53BitsTimesTwoToMinus53) {
  const auto plain = [](std::uint64_t bits) { return static_cast<double>(bits >> 11) * 0x1.0p-53; };
  EXPECT_EQ(CounterRng::unit_interval(0), 0.0);
  EXPECT_EQ(CounterRng::unit_interval(~std::uint64_t{0}), 1.0 - 0x1.0p-53);
  for (int bit = 0; bit < 64; ++bit) {
    const std::uint64_t one = std::uint64_t{1} << bit;
    EXPECT_EQ(CounterRng::unit_interval(one), plain(one)) << bit;
    EXPECT_EQ(CounterRng::unit_interval(~one), plain(~one)) << bit;
  }
  const CounterRng rng(77, 3);
  for (std::uint64_t i = 0; i < 100000; ++i) {
    ASSERT_EQ(CounterRng::unit_interval(rng.bits64(i)), plain(rng.bits64(i))) << i;
    ASSERT_EQ(CounterRng::unit_interval(rng.bits64(i)), rng.uniform(i)) << i;
  }
}

TEST(RngCursor, WalksCountersInOrder) {
  const CounterRng rng(5, 9);
  RngCursor cursor(rng, 10);
  EXPECT_EQ(cursor.bits64(), rng.bits64(10));
  EXPECT_EQ(cursor.uniform(), rng.uniform(11));
  EXPECT_EQ(cursor.counter(), 12u);
}

}  // namespace
// below(n) against the exact definition: a uniform value in [0, n) is floor(x n / 2^64) of a 64-bit
// x outside the 2^64 mod n rejected low words; UniformBelow must give the same values from the same
// draws, at sizes where rejection is rare (small n) and where half the draws test it (near 2^63).
TEST(RngBelow, UniformBelowDrawsWhatBelowDraws) {
  for (const std::uint64_t n : {std::uint64_t{1}, std::uint64_t{3}, std::uint64_t{1000003},
                                (std::uint64_t{1} << 63) + 12345, ~std::uint64_t{0}}) {
    const UniformBelow below(n);
    RngCursor a(CounterRng(77, n)), b(CounterRng(77, n));
    for (int i = 0; i < 2000; ++i) {
      const auto x = a.below(n);
      ASSERT_EQ(below(b), x) << "n " << n << ", draw " << i;
      ASSERT_LT(x, n);
    }
    EXPECT_EQ(a.counter(), b.counter()) << "both consume the same draws";
  }
}

// At n = 3 * 2^62 (where a quarter of the low words are redrawn) the values >= 2^63, a third of
// the range, take a third of the draws.
TEST(RngBelow, NoBiasNearTheTopOfTheRange) {
  const std::uint64_t n = std::uint64_t{3} << 62;
  RngCursor rng(CounterRng(5, 5));
  int top = 0;
  constexpr int kDraws = 30000;
  for (int i = 0; i < kDraws; ++i) top += rng.below(n) >= (std::uint64_t{1} << 63);
  EXPECT_NEAR(top / double(kDraws), 1.0 / 3.0, 5 * std::sqrt(2.0 / 9.0 / kDraws));
}

}  // namespace embscale
