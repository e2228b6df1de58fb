#include "workloads/key_permutation.hpp"

#include <algorithm>
#include <bit>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::workloads {

KeyPermutation::KeyPermutation(std::uint64_t n, std::uint64_t seed) : n_(n) {
  EMBSCALE_EXPECTS(n >= 1 && n <= (std::uint64_t{1} << 63), "a key permutation needs 1 <= n <= 2^63");
  const int bits = std::max(2, static_cast<int>(std::bit_width(n)));  // 2^bits > n - 1, 2^bits <= 2n
  const int left_bits = bits / 2;
  right_bits_ = bits - left_bits;  // both in [1, 32]
  left_mask_ = (std::uint64_t{1} << left_bits) - 1;
  right_mask_ = (std::uint64_t{1} << right_bits_) - 1;
  for (int i = 0; i < kRounds; ++i)
    round_keys_[static_cast<std::size_t>(i)] = hash_combine(seed, static_cast<std::uint64_t>(i));
}

std::uint64_t KeyPermutation::round_function(int round, std::uint64_t half) const noexcept {
  return mix64(half ^ round_keys_[static_cast<std::size_t>(round)]);
}

std::uint64_t KeyPermutation::encrypt(std::uint64_t x) const noexcept {
  std::uint64_t left = x >> right_bits_;
  std::uint64_t right = x & right_mask_;
  for (int round = 0; round < kRounds; ++round) {
    if (round % 2 == 0) left = (left + round_function(round, right)) & left_mask_;
    else right = (right + round_function(round, left)) & right_mask_;
  }
  return (left << right_bits_) | right;
}

std::uint64_t KeyPermutation::decrypt(std::uint64_t y) const noexcept {
  std::uint64_t left = y >> right_bits_;
  std::uint64_t right = y & right_mask_;
  for (int round = kRounds - 1; round >= 0; --round) {
    if (round % 2 == 0) left = (left - round_function(round, right)) & left_mask_;
    else right = (right - round_function(round, left)) & right_mask_;
  }
  return (left << right_bits_) | right;
}

std::uint64_t KeyPermutation::operator()(std::uint64_t x) const {
  EMBSCALE_EXPECTS(x < n_, "a key permutation maps [0, n)");
  do x = encrypt(x);
  while (x >= n_);
  return x;
}

std::uint64_t KeyPermutation::inverse(std::uint64_t y) const {
  EMBSCALE_EXPECTS(y < n_, "a key permutation maps [0, n)");
  do y = decrypt(y);
  while (y >= n_);
  return y;
}

}  // namespace embscale::workloads
