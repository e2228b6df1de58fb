// Checksum64 (core/checksum.hpp): fixed vectors from a plain reimplementation of its definition,
// any split of the stream gives the one-shot value, and single-bit flips change it.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "core/checksum.hpp"

namespace embscale {
namespace {

// The definition, written out plainly from the header comment and nothing else of checksum.cpp
// but its constants: the whole input at once, words assembled byte by byte (little-endian), no
// buffering.
std::uint64_t rotl(std::uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

std::uint64_t plain_checksum(const std::vector<unsigned char>& in, std::uint64_t seed) {
  const std::uint64_t p1 = 0x9E3779B185EBCA87ULL, p2 = 0xC2B2AE3D27D4EB4FULL, p3 = 0x165667B19E3779F9ULL,
                      p4 = 0x85EBCA77C2B2AE63ULL, p5 = 0x27D4EB2F165667C5ULL;
  const auto word = [&](std::size_t at) {
    std::uint64_t w = 0;
    for (int b = 7; b >= 0; --b) w = (w << 8) | in[at + static_cast<std::size_t>(b)];
    return w;
  };
  const auto round = [&](std::uint64_t lane, std::uint64_t w) { return rotl(lane + w * p2, 31) * p1; };
  std::uint64_t lane[4] = {seed + p1 + p2, seed + p2, seed, seed - p1};
  const std::size_t stripes = in.size() / 32;
  for (std::size_t s = 0; s < stripes; ++s)
    for (std::size_t j = 0; j < 4; ++j) lane[j] = round(lane[j], word(32 * s + 8 * j));
  std::uint64_t h = seed + p5;
  if (stripes > 0) {
    h = rotl(lane[0], 1) + rotl(lane[1], 7) + rotl(lane[2], 12) + rotl(lane[3], 18);
    for (std::size_t j = 0; j < 4; ++j) h = (h ^ round(0, lane[j])) * p1 + p4;
  }
  h += in.size();
  std::size_t at = 32 * stripes;
  for (; at + 8 <= in.size(); at += 8) h = rotl(h ^ round(0, word(at)), 27) * p1 + p4;
  if (at + 4 <= in.size()) {
    const std::uint64_t w = in[at] | (in[at + 1] << 8) | (in[at + 2] << 16) | (std::uint64_t{in[at + 3]} << 24);
    h = rotl(h ^ (w * p1), 23) * p2 + p3;
    at += 4;
  }
  for (; at < in.size(); ++at) h = rotl(h ^ (in[at] * p5), 11) * p1;
  h = (h ^ (h >> 33)) * p2;
  h = (h ^ (h >> 29)) * p3;
  return h ^ (h >> 32);
}

std::vector<unsigned char> pattern(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<unsigned char> v(n);
  for (auto& b : v) b = static_cast<unsigned char>(rng());
  return v;
}

TEST(Checksum64, MatchesThePlainDefinitionForEveryLengthUpTo300) {
  for (std::size_t n = 0; n <= 300; ++n) {
    const auto in = pattern(n, n);
    for (const std::uint64_t seed : {std::uint64_t{0}, std::uint64_t{0xDEADBEEF}})
      ASSERT_EQ(checksum64(in.data(), in.size(), seed), plain_checksum(in, seed)) << n << " bytes, seed " << seed;
  }
}

// XXH64 reference values (Python's xxhash 3.x: xxhash.xxh64(data, seed).intdigest()). The KV dump
// and embscale trace formats depend on them: a change here is a version change of both.
TEST(Checksum64, FixedVectors) {
  const std::vector<unsigned char> empty;
  const std::vector<unsigned char> abc = {'a', 'b', 'c'};
  std::vector<unsigned char> counting(100);
  for (std::size_t i = 0; i < counting.size(); ++i) counting[i] = static_cast<unsigned char>(i);
  EXPECT_EQ(checksum64(empty.data(), 0), plain_checksum(empty, 0));
  EXPECT_EQ(checksum64(abc.data(), abc.size()), plain_checksum(abc, 0));
  EXPECT_EQ(checksum64(counting.data(), counting.size()), plain_checksum(counting, 0));
  EXPECT_EQ(checksum64(empty.data(), 0), 0xef46db3751d8e999ULL);
  EXPECT_EQ(checksum64(abc.data(), abc.size()), 0x44bc2cf5ad770999ULL);
  EXPECT_EQ(checksum64(counting.data(), counting.size()), 0x6ac1e58032166597ULL);
  EXPECT_EQ(checksum64(counting.data(), counting.size(), 0xDEADBEEF), 0x7807f0202c433d8aULL);
}

TEST(Checksum64, AnySplitGivesTheOneShotValue) {
  const auto in = pattern(1000, 7);
  const std::uint64_t whole = checksum64(in.data(), in.size());
  for (std::size_t a = 0; a <= in.size(); a += 37)
    for (std::size_t b = a; b <= in.size(); b += 53) {
      Checksum64 c;
      c.update(in.data(), a);
      c.update(in.data() + a, b - a);
      c.update(in.data() + b, in.size() - b);
      ASSERT_EQ(c.value(), whole) << "split at " << a << " and " << b;
    }
  // Byte at a time, and value() in the middle does not disturb the state.
  Checksum64 c;
  for (std::size_t i = 0; i < in.size(); ++i) {
    c.update(&in[i], 1);
    if (i % 97 == 0) (void)c.value();
  }
  EXPECT_EQ(c.value(), whole);
  EXPECT_EQ(c.total_bytes(), in.size());
}

TEST(Checksum64, EverySingleBitFlipChangesIt) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{31}, std::size_t{32}, std::size_t{33}, std::size_t{200}}) {
    auto in = pattern(n, 100 + n);
    const std::uint64_t base = checksum64(in.data(), in.size());
    std::set<std::uint64_t> seen{base};
    for (std::size_t i = 0; i < n; ++i)
      for (int bit = 0; bit < 8; ++bit) {
        in[i] ^= static_cast<unsigned char>(1u << bit);
        const std::uint64_t flipped = checksum64(in.data(), in.size());
        EXPECT_NE(flipped, base) << n << " bytes, byte " << i << " bit " << bit;
        seen.insert(flipped);
        in[i] ^= static_cast<unsigned char>(1u << bit);
      }
    EXPECT_EQ(seen.size(), 1 + 8 * n) << "two flips collided";
  }
}

TEST(Checksum64, LengthAndSeedMatter) {
  const std::vector<unsigned char> zeros(64, 0);
  std::set<std::uint64_t> seen;
  for (std::size_t n = 0; n <= 64; ++n) seen.insert(checksum64(zeros.data(), n));
  EXPECT_EQ(seen.size(), 65u) << "runs of zero bytes of different lengths collided";
  EXPECT_NE(checksum64(zeros.data(), 8, 0), checksum64(zeros.data(), 8, 1));
}

}  // namespace
}  // namespace embscale
