// The step a row was last touched (LazyGlobal Adam), stored in state values that every storage
// type holds exactly: kStepDigits base-256 digits of the step mod 2^32, least significant first,
// each an integer in [0, 255]. Rows may be stored as fp16 or bf16 (converted to float around the
// optimizer): bf16's 8-bit significand holds the integers up to 256 exactly, fp16's up to 2048,
// float's up to 2^24; a float's bit pattern, or a step above 256 in one value, would not survive.
// The steps a row missed are (t - p) mod 2^32: right unless a row goes 2^32 steps untouched.
//
// The encoding itself is embedding/portable/optimizer_ref.hpp's (a device kernel reads it too);
// these are its span forms for the host and the tests.
#pragma once

#include <cstdint>
#include <span>

#include "embedding/portable/optimizer_ref.hpp"

namespace embscale::embedding::optimizers {

inline constexpr int kStepDigits = portable::kStepDigits;

inline void store_step(std::int64_t step, std::span<float> digits) noexcept {
  portable::store_step_digits(step, digits.data());
}

// The stored step mod 2^32.
inline std::uint32_t load_step(std::span<const float> digits) noexcept {
  return portable::load_step_digits(digits.data());
}

// Steps from the stored step to `step` (>= the stored one).
inline std::int64_t steps_since(std::span<const float> digits, std::int64_t step) noexcept {
  return portable::steps_since_digits(digits.data(), step);
}

}  // namespace embscale::embedding::optimizers
