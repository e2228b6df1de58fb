// The step a row was last touched (LazyGlobal Adam), stored in state values that every storage
// type holds exactly: kStepDigits base-256 digits of the step mod 2^32, least significant first,
// each an integer in [0, 255]. Rows may be stored as fp16 or bf16 (converted to float around the
// optimizer): bf16's 8-bit significand holds the integers up to 256 exactly, fp16's up to 2048,
// float's up to 2^24; a float's bit pattern, or a step above 256 in one value, would not survive.
// The steps a row missed are (t - p) mod 2^32: right unless a row goes 2^32 steps untouched.
//
// Internal to lib/embedding (header-only so that tests can check the encoding alone).
#pragma once

#include <cstdint>
#include <span>

namespace embscale::embedding::optimizers {

inline constexpr int kStepDigits = 4;

inline void store_step(std::int64_t step, std::span<float> digits) noexcept {
  auto rest = static_cast<std::uint32_t>(static_cast<std::uint64_t>(step));  // mod 2^32
  for (int i = 0; i < kStepDigits; ++i, rest >>= 8)
    digits[static_cast<std::size_t>(i)] = static_cast<float>(rest & 0xffu);
}

// The stored step mod 2^32.
inline std::uint32_t load_step(std::span<const float> digits) noexcept {
  std::uint32_t step = 0;
  for (int i = kStepDigits - 1; i >= 0; --i)
    step = (step << 8) | static_cast<std::uint32_t>(digits[static_cast<std::size_t>(i)]);
  return step;
}

// Steps from the stored step to `step` (>= the stored one).
inline std::int64_t steps_since(std::span<const float> digits, std::int64_t step) noexcept {
  const auto now = static_cast<std::uint32_t>(static_cast<std::uint64_t>(step));
  return static_cast<std::int64_t>(static_cast<std::uint32_t>(now - load_step(digits)));
}

}  // namespace embscale::embedding::optimizers
