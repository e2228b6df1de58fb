// Storage types of table rows: float32, IEEE fp16 and bfloat16. Rows are stored in the table's
// type and computed on in float; these are the conversions (round to nearest even, NaN kept
// NaN, overflow to infinity), portable C++ so that every build has them.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

namespace embscale::kv {

enum class ValueType { kFloat32, kFloat16, kBFloat16 };

// A switch without a default: a new type is a -Wswitch warning here, not silently 2 bytes.
constexpr std::size_t value_bytes(ValueType t) noexcept {
  switch (t) {
    case ValueType::kFloat32: return 4;
    case ValueType::kFloat16:
    case ValueType::kBFloat16: return 2;
  }
  return 0;  // not a value type (a value cast from outside the enum)
}
std::string to_string(ValueType t);

constexpr std::uint16_t float_to_bf16(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);  // quiet NaN
  const std::uint32_t rounding = 0x7fffu + ((bits >> 16) & 1u);  // to nearest, ties to even
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

constexpr float bf16_to_float(std::uint16_t h) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(h) << 16);
}

constexpr std::uint16_t float_to_fp16(float f) noexcept {
  const std::uint32_t bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (bits >> 16) & 0x8000u;
  const std::uint32_t abs = bits & 0x7fffffffu;
  if (abs > 0x7f800000u) return static_cast<std::uint16_t>(sign | 0x7e00u);   // NaN
  if (abs >= 0x477ff000u) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to >= 65520: infinity
  if (abs < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    // The value is M * 2^(e - 150) with M the 24-bit significand and e the exponent field; in
    // units of the half's subnormal step 2^-24 that is M * 2^(e - 126): shift right by 126 - e,
    // rounding to nearest, ties to even.
    const std::uint32_t exponent = abs >> 23;
    if (exponent < 102) return static_cast<std::uint16_t>(sign);  // below half of 2^-24
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126 - exponent;  // 14 (e = 112) to 24 (e = 102)
    const std::uint32_t half_units = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1);
    const std::uint32_t rounded = half_units + ((rest > halfway || (rest == halfway && (half_units & 1u))) ? 1u : 0u);
    return static_cast<std::uint16_t>(sign | rounded);
  }
  // Normal: rebias the exponent (127 -> 15) and round the mantissa from 23 to 10 bits.
  const std::uint32_t rebased = abs - (112u << 23);
  const std::uint32_t rounded = rebased + 0xfffu + ((rebased >> 13) & 1u);
  return static_cast<std::uint16_t>(sign | (rounded >> 13));
}

constexpr float fp16_to_float(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  const std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
  return sign ? -magnitude : magnitude;
}

}  // namespace embscale::kv
