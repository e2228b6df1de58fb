// KeyPermutation: a keyed bijection of [0, n), for mapping Zipf ranks to keys so that the hot
// keys are scattered over the key space instead of being 0, 1, 2, ... (hashing modulo n is not a
// bijection: it merges keys and distorts the skew it is meant to hide).
//
// Construction (Black and Rogaway's cycle walking over an unbalanced Feistel network, as in the
// FE2 construction; 2002): the domain is 2^bits with bits = max(2, bit_width(n)), the smallest
// power of two strictly above n - 1 (for n a power of two, 2n: a power-of-two domain equal to n
// would make every permutation even, which is detectable). A value is split into a left half of
// floor(bits / 2) bits and a right half of the rest; round i adds F_i(other half) to one half
// modulo its width, alternating halves, F_i(v) = mix64(v ^ key_i) with key_i derived from the
// seed. Any round function gives a bijection of the domain; a value that lands at or above n is
// sent through the network again until it lands below n, which restricts the bijection to [0, n)
// (the walk stays on the value's cycle, so it returns below n). The domain is less than 2n, so
// a value takes fewer than two passes on average.
//
// O(1) memory and random access: key i is computable on any rank in any order, and inverse()
// maps a key back to its rank (tests, trace statistics). Not a cipher: six rounds of a 64-bit
// mixer are for scattering, not for secrecy.
#pragma once

#include <array>
#include <cstdint>

namespace embscale::workloads {

class KeyPermutation {
 public:
  static constexpr int kRounds = 6;
  // A permutation of [0, n) chosen by `seed`; 1 <= n <= 2^63.
  KeyPermutation(std::uint64_t n, std::uint64_t seed);

  std::uint64_t size() const noexcept { return n_; }
  // The image of x in [0, n).
  std::uint64_t operator()(std::uint64_t x) const;
  // The x with (*this)(x) == y, for y in [0, n).
  std::uint64_t inverse(std::uint64_t y) const;

 private:
  std::uint64_t encrypt(std::uint64_t x) const noexcept;  // one pass over the 2^bits domain
  std::uint64_t decrypt(std::uint64_t y) const noexcept;
  std::uint64_t round_function(int round, std::uint64_t half) const noexcept;

  std::uint64_t n_;
  int right_bits_;
  std::uint64_t left_mask_;
  std::uint64_t right_mask_;
  std::array<std::uint64_t, kRounds> round_keys_;
};

}  // namespace embscale::workloads
