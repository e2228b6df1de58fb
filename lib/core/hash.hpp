// Hashing of 64-bit keys. One mixer for the whole suite, so that a key lands in the same place
// (shard, bucket, digest) on every rank, in every tool and on the GPU.
#pragma once

#include <cstdint>

namespace embscale {

// The 64-bit finalizer of MurmurHash3 (fmix64): a bijection on uint64 with full avalanche,
// so distinct keys never collide before the caller reduces the hash to a range.
constexpr std::uint64_t mix64(std::uint64_t x) noexcept {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return x;
}

// Combines a seed with a value (boost::hash_combine's recipe, widened to 64 bits) and mixes.
constexpr std::uint64_t hash_combine(std::uint64_t seed, std::uint64_t value) noexcept {
  return mix64(seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2)));
}

// FNV-1a over bytes: used for checksums of configs and files, not for keys.
constexpr std::uint64_t fnv1a64(const unsigned char* data, std::uint64_t size,
                                std::uint64_t state = 0xcbf29ce484222325ULL) noexcept {
  for (std::uint64_t i = 0; i < size; ++i) {
    state ^= data[i];
    state *= 0x100000001b3ULL;
  }
  return state;
}

}  // namespace embscale
