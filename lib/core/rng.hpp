// Counter-based random numbers: Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy
// as 1, 2, 3", SC'11), the generator of Random123 and cuRAND.
//
// Why counter-based: a value is a pure function of (seed, stream id, counter), so the workload
// of sample i or the initial row of key k is the same whichever rank, thread or GPU computes it,
// in whatever order. Nothing is carried between calls; there is no state to split or share.
//
// Mapping: key = (seed low, seed high); counter = (counter low, counter high, stream low,
// stream high). One call yields four 32-bit words.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <optional>

namespace embscale {

using PhiloxBlock = std::array<std::uint32_t, 4>;
// GCC's and clang's 128-bit integer (__extension__: no -Wpedantic warning), for exact 64 x 64-bit
// products in samplers.
__extension__ typedef unsigned __int128 UInt128;

namespace detail {
constexpr std::uint32_t kPhiloxM0 = 0xD2511F53u;
constexpr std::uint32_t kPhiloxM1 = 0xCD9E8D57u;
constexpr std::uint32_t kPhiloxW0 = 0x9E3779B9u;  // golden ratio
constexpr std::uint32_t kPhiloxW1 = 0xBB67AE85u;  // sqrt(3) - 1
}  // namespace detail

// The raw Philox4x32 bijection with 10 rounds, checked against Random123's known-answer vectors.
constexpr PhiloxBlock philox4x32_10(PhiloxBlock ctr, std::array<std::uint32_t, 2> key) noexcept {
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{detail::kPhiloxM0} * ctr[0];
    const std::uint64_t p1 = std::uint64_t{detail::kPhiloxM1} * ctr[2];
    ctr = {static_cast<std::uint32_t>(p1 >> 32) ^ ctr[1] ^ key[0], static_cast<std::uint32_t>(p1),
           static_cast<std::uint32_t>(p0 >> 32) ^ ctr[3] ^ key[1], static_cast<std::uint32_t>(p0)};
    key[0] += detail::kPhiloxW0;
    key[1] += detail::kPhiloxW1;
  }
  return ctr;
}

// A stream of random values identified by (seed, stream). draw(counter) is pure; the Cursor
// below walks counters for code that needs "the next" value.
class CounterRng {
 public:
  constexpr CounterRng(std::uint64_t seed, std::uint64_t stream) noexcept : seed_(seed), stream_(stream) {}

  constexpr PhiloxBlock block(std::uint64_t counter) const noexcept {
    return philox4x32_10({static_cast<std::uint32_t>(counter), static_cast<std::uint32_t>(counter >> 32),
                          static_cast<std::uint32_t>(stream_), static_cast<std::uint32_t>(stream_ >> 32)},
                         {static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32)});
  }

  // 64 random bits from the first half of block(counter).
  constexpr std::uint64_t bits64(std::uint64_t counter) const noexcept {
    const auto b = block(counter);
    return (std::uint64_t{b[1]} << 32) | b[0];
  }

  // Uniform double in [0, 1) with 53 random bits: (bits >> 11) 2^-53.
  constexpr double uniform(std::uint64_t counter) const noexcept {
    return static_cast<double>(bits64(counter) >> 11) * 0x1.0p-53;
  }

  // The same double as uniform() from the same 64 bits, for loops meant to vectorize: converted
  // without an int64 -> double instruction (SSE2 and AVX2 have none, so a loop using one stays
  // scalar; a scalar caller is faster with the one instruction): the value's upper 52 bits and its
  // lowest bit each placed in the significand of 2^52, exactly.
  static constexpr double unit_interval(std::uint64_t bits) noexcept {
    const std::uint64_t value = bits >> 11;  // < 2^53
    constexpr auto kTwoTo52Bits = std::bit_cast<std::uint64_t>(0x1.0p52);
    const double upper = std::bit_cast<double>(kTwoTo52Bits | (value >> 1)) - 0x1.0p52;
    const double lowest = std::bit_cast<double>(kTwoTo52Bits | (value & 1)) - 0x1.0p52;
    return (upper * 2.0 + lowest) * 0x1.0p-53;
  }

  // Uniform float in [0, 1) with 24 random bits from word `lane` (0..3) of block(counter): four
  // floats per Philox call, used to fill embedding rows quickly.
  static constexpr float uniform_float(const PhiloxBlock& b, int lane) noexcept {
    return static_cast<float>(b[static_cast<unsigned>(lane)] >> 8) * 0x1.0p-24f;
  }

  constexpr std::uint64_t seed() const noexcept { return seed_; }
  constexpr std::uint64_t stream() const noexcept { return stream_; }

 private:
  std::uint64_t seed_;
  std::uint64_t stream_;
};

// Sequential view of a CounterRng for samplers that consume a variable number of draws
// (rejection sampling). Deterministic: the n-th draw is always counter n.
class RngCursor {
 public:
  constexpr explicit RngCursor(CounterRng rng, std::uint64_t first_counter = 0) noexcept
      : rng_(rng), counter_(first_counter) {}
  constexpr double uniform() noexcept { return rng_.uniform(counter_++); }
  constexpr std::uint64_t bits64() noexcept { return rng_.bits64(counter_++); }
  // Uniform integer in [0, n), n >= 1, exactly (Lemire, "Fast random integer generation in an
  // interval", 2019): the high word of bits * n, redrawn in the rare case (probability < n / 2^64)
  // where the low word falls in the 2^64 mod n values that would favour some results.
  constexpr std::uint64_t below(std::uint64_t n) noexcept {
    UInt128 product = static_cast<UInt128>(bits64()) * n;
    auto low = static_cast<std::uint64_t>(product);
    if (low < n) {
      const std::uint64_t threshold = (0 - n) % n;  // 2^64 mod n
      while (low < threshold) {
        product = static_cast<UInt128>(bits64()) * n;
        low = static_cast<std::uint64_t>(product);
      }
    }
    return static_cast<std::uint64_t>(product >> 64);
  }
  constexpr std::uint64_t counter() const noexcept { return counter_; }
  constexpr const CounterRng& rng() const noexcept { return rng_; }

 private:
  CounterRng rng_;
  std::uint64_t counter_;
};

// RngCursor::below with its 2^64 mod n computed once, for a sampler that draws below one n
// many times: near n = 2^63 half the draws need it, and the division would double their cost.
// The same draws give the same values as below(n).
class UniformBelow {
 public:
  constexpr explicit UniformBelow(std::uint64_t n) noexcept : n_(n), threshold_(n == 0 ? 0 : (0 - n) % n) {}
  constexpr std::uint64_t operator()(RngCursor& rng) const noexcept {
    for (;;)
      if (const auto value = from_bits(rng.bits64())) return *value;
  }
  // The value a draw of these 64 bits gives, or nothing where Lemire's method draws again (a
  // chance of (2^64 mod n) / 2^64 < n / 2^64): for batch code that has the first draw's bits.
  constexpr std::optional<std::uint64_t> from_bits(std::uint64_t bits) const noexcept {
    const UInt128 product = static_cast<UInt128>(bits) * n_;
    if (static_cast<std::uint64_t>(product) < threshold_) return std::nullopt;
    return static_cast<std::uint64_t>(product >> 64);
  }
  constexpr std::uint64_t n() const noexcept { return n_; }

 private:
  std::uint64_t n_;
  std::uint64_t threshold_;  // 2^64 mod n: low words below it are redrawn
};

}  // namespace embscale
