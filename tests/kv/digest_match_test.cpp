// The digest matchers against a plain loop, for every count 0..64 and on arrays with many
// repeated digests; the SIMD ones only where this CPU runs them (the portable one everywhere).
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "kv/digest_match.hpp"

namespace embscale::kv {
namespace {

std::uint64_t naive(const std::uint8_t* digests, std::uint32_t count, std::uint8_t digest) {
  std::uint64_t mask = 0;
  for (std::uint32_t i = 0; i < count; ++i)
    if (digests[i] == digest) mask |= 1ULL << i;
  return mask;
}

TEST(DigestMatch, EveryImplementationAgreesWithAPlainLoop) {
  std::vector<DigestMatcher> matchers{match_digests_portable};
  if (cpu_supports_avx2()) matchers.push_back(match_digests_avx2);
  if (cpu_supports_avx512()) matchers.push_back(match_digests_avx512);
  std::mt19937 rng(17);
  std::vector<std::uint8_t> digests(64 + kDigestReadBytes);
  for (int trial = 0; trial < 2000; ++trial) {
    const int alphabet = trial % 2 ? 256 : 3;  // few distinct values: many matches, 0x00 and 0xFF edges
    for (auto& d : digests) d = static_cast<std::uint8_t>(alphabet == 256 ? rng() % 256 : (rng() % 3) * 127);
    for (std::uint32_t count = 0; count <= 64; ++count) {
      const auto digest = digests[rng() % 64];
      const auto want = naive(digests.data(), count, digest);
      for (const auto matcher : matchers)
        ASSERT_EQ(matcher(digests.data(), count, digest), want) << digest_matcher_name(matcher) << " count " << count;
    }
  }
  std::printf("digest matchers checked: portable%s%s; the table uses %s\n", cpu_supports_avx2() ? ", avx2" : "",
              cpu_supports_avx512() ? ", avx512" : "", digest_matcher_name(best_digest_matcher()).c_str());
}

}  // namespace
}  // namespace embscale::kv
