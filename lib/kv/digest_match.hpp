// Comparing a bucket's one-byte digests against a probe's, up to 64 at a time: the inner loop of
// every lookup. Three implementations, chosen once at run time from what the CPU supports:
// AVX-512BW (one 64-byte compare), AVX2 (two 32-byte compares), and a portable one (eight bytes
// at a time in a 64-bit word). All read 64 bytes from `digests`: callers keep 64 readable bytes
// after the last digest (HostTable pads its digest array).
#pragma once

#include <cstdint>
#include <string>

namespace embscale::kv {

// Bit i set when digests[i] == digest, for i < count (count <= 64); higher bits clear.
using DigestMatcher = std::uint64_t (*)(const std::uint8_t* digests, std::uint32_t count, std::uint8_t digest);

std::uint64_t match_digests_portable(const std::uint8_t* digests, std::uint32_t count, std::uint8_t digest);
std::uint64_t match_digests_avx2(const std::uint8_t* digests, std::uint32_t count, std::uint8_t digest);
std::uint64_t match_digests_avx512(const std::uint8_t* digests, std::uint32_t count, std::uint8_t digest);

// The best implementation this CPU runs, and its name ("avx512", "avx2", "portable").
DigestMatcher best_digest_matcher() noexcept;
std::string digest_matcher_name(DigestMatcher matcher);
bool cpu_supports_avx2() noexcept;
bool cpu_supports_avx512() noexcept;

inline constexpr std::uint32_t kDigestReadBytes = 64;

}  // namespace embscale::kv
