// 16-bit floating-point element types that C++20 lacks: IEEE 754 binary16 ("half", NCCL's
// ncclHalf) and bfloat16 (the upper half of a float32, NCCL's ncclBfloat16). Storage only, two
// bytes each, trivially copyable so they travel through the Communicator as they are; arithmetic
// converts to float and back (reductions on them: lib/comm/mpi_types.cpp).
//
// Conversions from float round to nearest, ties to even, as hardware does (CUDA's __float2half_rn,
// __float2bfloat16_rn); NaN stays NaN (quiet), infinities and signed zeros are kept, half's
// subnormals are produced and read exactly. Every float value of a Half or BFloat16 is exact, so
// to_float is lossless. The one codec of these types (the KV table's rows, the row codec, the
// Communicator's reductions): inline and constexpr, so row loops convert without a call per value.
#pragma once

#include <bit>
#include <cstdint>

namespace embscale {

struct Half {
  std::uint16_t bits = 0;
  friend bool operator==(Half, Half) = default;
};

struct BFloat16 {
  std::uint16_t bits = 0;
  friend bool operator==(BFloat16, BFloat16) = default;
};

// The constants and rounding of the conversions below (not part of the interface).
namespace half_float_detail {

constexpr std::uint32_t kFloatAbs = 0x7fffffffu;
constexpr std::uint32_t kFloatInf = 0x7f800000u;
constexpr std::uint32_t kFloatQuiet = 0x00400000u;  // the quiet bit of a float NaN's payload
constexpr std::uint16_t kHalfInf = 0x7c00u;
constexpr std::uint16_t kHalfQuiet = 0x0200u;
constexpr std::uint16_t kBFloatQuiet = 0x0040u;

// Rounds `value >> shift` to nearest, ties to even (shift >= 1).
constexpr std::uint32_t shift_round_even(std::uint32_t value, unsigned shift) {
  const std::uint32_t kept = value >> shift;
  const std::uint32_t rest = value & ((1u << shift) - 1u);
  const std::uint32_t half = 1u << (shift - 1u);
  return kept + ((rest > half || (rest == half && (kept & 1u))) ? 1u : 0u);
}

}  // namespace half_float_detail

constexpr Half to_half(float value) noexcept {
  using namespace half_float_detail;
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((x >> 16) & 0x8000u);
  const std::uint32_t abs = x & kFloatAbs;
  if (abs > kFloatInf)  // NaN: quiet, keeping the payload's top bits
    return Half{static_cast<std::uint16_t>(sign | kHalfInf | kHalfQuiet | ((abs >> 13) & 0x3ffu))};
  // 65520 = 65504 (the largest half) + half an ulp: the tie rounds to the even neighbour, 2^16,
  // which half cannot hold. From there on (infinity included) the result is infinite.
  if (abs >= 0x477ff000u) return Half{static_cast<std::uint16_t>(sign | kHalfInf)};
  if (abs >= 0x38800000u) {  // 2^-14 and above: a normal half. Rebias 127 -> 15 and round off 13
    // bits; a carry out of the mantissa correctly bumps the exponent.
    return Half{static_cast<std::uint16_t>(sign | shift_round_even(abs - 0x38000000u, 13))};
  }
  // A half subnormal (or zero): the result counts units of 2^-24. The float is m * 2^(e - 150)
  // with m its 24-bit significand, so the count is m >> (126 - e), rounded.
  const std::uint32_t e = abs >> 23;
  const unsigned shift = 126u - e;
  if (shift > 24u) return Half{sign};  // below 2^-25 (m < 2^24): rounds to zero
  const std::uint32_t m = (abs & 0x7fffffu) | 0x800000u;
  return Half{static_cast<std::uint16_t>(sign | shift_round_even(m, shift))};
}

constexpr float to_float(Half value) noexcept {
  using namespace half_float_detail;
  const std::uint32_t sign = static_cast<std::uint32_t>(value.bits & 0x8000u) << 16;
  const std::uint32_t exponent = (value.bits >> 10) & 0x1fu;
  const std::uint32_t mantissa = value.bits & 0x3ffu;
  if (exponent == 0x1fu)  // infinity, or NaN made quiet (as hardware conversions do)
    return std::bit_cast<float>(sign | kFloatInf | (mantissa << 13) | (mantissa != 0 ? kFloatQuiet : 0u));
  if (exponent == 0) {  // zero or subnormal: mantissa * 2^-24, exact in float
    const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return std::bit_cast<float>(sign | std::bit_cast<std::uint32_t>(magnitude));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

constexpr BFloat16 to_bfloat16(float value) noexcept {
  using namespace half_float_detail;
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  if ((x & kFloatAbs) > kFloatInf) return BFloat16{static_cast<std::uint16_t>((x >> 16) | kBFloatQuiet)};
  // Round off the low 16 bits; a carry bumps the exponent and, past the largest bfloat16,
  // reaches infinity, which is round-to-nearest-even's answer there.
  return BFloat16{static_cast<std::uint16_t>(shift_round_even(x, 16))};
}

constexpr float to_float(BFloat16 value) noexcept {
  using namespace half_float_detail;
  std::uint32_t x = static_cast<std::uint32_t>(value.bits) << 16;
  if ((x & kFloatAbs) > kFloatInf) x |= kFloatQuiet;
  return std::bit_cast<float>(x);
}

}  // namespace embscale
