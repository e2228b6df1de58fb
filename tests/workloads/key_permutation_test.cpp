// KeyPermutation is a bijection of [0, n): exhaustively for every n up to 300 and some awkward
// sizes (powers of two and their neighbours), with inverse() its inverse; different seeds give
// different permutations; at 10^11 and 2^63 keys it round-trips and stays in range; and it
// scatters the hottest ranks over the key space (a chi-square of their images over 16 bins).
#include "workloads/key_permutation.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "core/error.hpp"

namespace embscale::workloads {
namespace {

void expect_bijection(std::uint64_t n, std::uint64_t seed) {
  const KeyPermutation permutation(n, seed);
  std::vector<char> hit(n, 0);
  for (std::uint64_t x = 0; x < n; ++x) {
    const std::uint64_t y = permutation(x);
    ASSERT_LT(y, n) << "n " << n << ", x " << x;
    ASSERT_FALSE(hit[y]) << "n " << n << ": two ranks map to " << y;
    hit[y] = 1;
    ASSERT_EQ(permutation.inverse(y), x) << "n " << n;
  }
}

TEST(KeyPermutation, IsABijectionOfEverySmallDomain) {
  for (std::uint64_t n = 1; n <= 300; ++n) expect_bijection(n, 7);
  for (const std::uint64_t n : {1023u, 1024u, 1025u, 4096u, 65535u, 65536u, 65537u, 1'000'000u})
    for (const std::uint64_t seed : {1u, 2u}) expect_bijection(n, seed);
}

TEST(KeyPermutation, SeedsChooseDifferentPermutations) {
  const KeyPermutation a(1000, 1), b(1000, 2);
  int same = 0;
  for (std::uint64_t x = 0; x < 1000; ++x) same += a(x) == b(x) ? 1 : 0;
  EXPECT_LT(same, 10);  // two random permutations agree on ~1 point
}

TEST(KeyPermutation, RoundTripsAtHugeDomains) {
  std::mt19937_64 rng(5);
  for (const std::uint64_t n : {std::uint64_t{100'000'000'000}, (std::uint64_t{1} << 63) - 1, std::uint64_t{1} << 63}) {
    const KeyPermutation permutation(n, 11);
    for (int i = 0; i < 20000; ++i) {
      const std::uint64_t x =
          i < 10 ? static_cast<std::uint64_t>(i) : (i < 20 ? n - 1 - static_cast<std::uint64_t>(i - 10) : rng() % n);
      const std::uint64_t y = permutation(x);
      ASSERT_LT(y, n);
      ASSERT_EQ(permutation.inverse(y), x) << "n " << n << ", x " << x;
    }
  }
}

TEST(KeyPermutation, ScattersTheHottestRanksOverTheKeySpace) {
  // The images of ranks 0 .. 9999 of a million keys, in 16 equal bins: the 0.999 quantile of
  // chi-square(15) is 37.7. The identity map would put all of them in the first bin.
  const std::uint64_t n = 1'000'000;
  const KeyPermutation permutation(n, 3);
  std::vector<int> bins(16, 0);
  constexpr int kRanks = 10000;
  for (std::uint64_t x = 0; x < kRanks; ++x) ++bins[permutation(x) * 16 / n];
  double chi2 = 0;
  for (const int count : bins) chi2 += (count - kRanks / 16.0) * (count - kRanks / 16.0) / (kRanks / 16.0);
  EXPECT_LT(chi2, 37.7);
}

TEST(KeyPermutation, RefusesAnEmptyOrOversizedDomainAndValuesOutsideIt) {
  EXPECT_THROW(KeyPermutation(0, 1), Error);
  EXPECT_THROW(KeyPermutation((std::uint64_t{1} << 63) + 1, 1), Error);
  const KeyPermutation permutation(10, 1);
  EXPECT_THROW(permutation(10), Error);
  EXPECT_THROW(permutation.inverse(10), Error);
}

}  // namespace
}  // namespace embscale::workloads
