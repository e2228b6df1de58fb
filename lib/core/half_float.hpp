// 16-bit floating-point element types that C++20 lacks: IEEE 754 binary16 ("half", NCCL's
// ncclHalf) and bfloat16 (the upper half of a float32, NCCL's ncclBfloat16). Storage only, two
// bytes each, trivially copyable so they travel through the Communicator as they are; arithmetic
// converts to float and back (reductions on them: lib/comm/mpi_types.cpp).
//
// Conversions from float round to nearest, ties to even, as hardware does (CUDA's __float2half_rn,
// __float2bfloat16_rn); NaN stays NaN (quiet), infinities and signed zeros are kept, half's
// subnormals are produced and read exactly. Every float value of a Half or BFloat16 is exact, so
// to_float is lossless.
#pragma once

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

Half to_half(float value) noexcept;
float to_float(Half value) noexcept;
BFloat16 to_bfloat16(float value) noexcept;
float to_float(BFloat16 value) noexcept;

}  // namespace embscale
