// Rows stored in fp32, fp16 or bf16 and computed on in fp32: the conversion of a run of values
// between a table's storage type and float (value_types.hpp's rounding: to nearest even): the
// static embedding table's rows and the tiered tables' dumps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kv/value_types.hpp"

namespace embscale::kv {

inline void decode_values(ValueType type, const std::byte* in, float* out, std::size_t n) noexcept {
  switch (type) {
    case ValueType::kFloat32: std::memcpy(out, in, n * sizeof(float)); return;
    case ValueType::kFloat16:
    case ValueType::kBFloat16: {
      const bool half = type == ValueType::kFloat16;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = half ? fp16_to_float(h) : bf16_to_float(h);
      }
      return;
    }
  }
}

inline void encode_values(ValueType type, const float* in, std::byte* out, std::size_t n) noexcept {
  switch (type) {
    case ValueType::kFloat32: std::memcpy(out, in, n * sizeof(float)); return;
    case ValueType::kFloat16:
    case ValueType::kBFloat16: {
      const bool half = type == ValueType::kFloat16;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = half ? float_to_fp16(in[i]) : float_to_bf16(in[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    }
  }
}

}  // namespace embscale::kv
