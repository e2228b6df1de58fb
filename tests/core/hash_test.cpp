#include "core/hash.hpp"

#include <gtest/gtest.h>

#include <bit>
#include <set>

namespace embscale {
namespace {

TEST(Mix64, IsInjectiveOnASampleAndAvalanches) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t k = 0; k < 100000; ++k) seen.insert(mix64(k));
  EXPECT_EQ(seen.size(), 100000u);
  // Flipping one input bit flips about half the output bits on average.
  double flipped = 0;
  int trials = 0;
  for (std::uint64_t k = 1; k < 2000; k += 7)
    for (int bit = 0; bit < 64; ++bit, ++trials) flipped += std::popcount(mix64(k) ^ mix64(k ^ (1ULL << bit)));
  EXPECT_NEAR(flipped / trials, 32.0, 1.0);
}

TEST(Fnv1a64, MatchesReferenceValues) {
  const unsigned char a[] = {'a'};
  EXPECT_EQ(fnv1a64(nullptr, 0), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64(a, 1), 0xaf63dc4c8601ec8cULL);
}

}  // namespace
}  // namespace embscale
