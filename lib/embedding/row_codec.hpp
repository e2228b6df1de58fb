// Rows stored in fp32, fp16 or bf16 and computed on in fp32: the conversion of a run of values
// between a table's storage type and float (kv/value_types.hpp's rounding: to nearest even).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "kv/value_types.hpp"

namespace embscale::embedding {

inline void decode_values(kv::ValueType type, const std::byte* in, float* out, std::size_t n) noexcept {
  switch (type) {
    case kv::ValueType::kFloat32: std::memcpy(out, in, n * sizeof(float)); return;
    case kv::ValueType::kFloat16:
    case kv::ValueType::kBFloat16: {
      const bool half = type == kv::ValueType::kFloat16;
      for (std::size_t i = 0; i < n; ++i) {
        std::uint16_t h;
        std::memcpy(&h, in + 2 * i, 2);
        out[i] = half ? kv::fp16_to_float(h) : kv::bf16_to_float(h);
      }
      return;
    }
  }
}

inline void encode_values(kv::ValueType type, const float* in, std::byte* out, std::size_t n) noexcept {
  switch (type) {
    case kv::ValueType::kFloat32: std::memcpy(out, in, n * sizeof(float)); return;
    case kv::ValueType::kFloat16:
    case kv::ValueType::kBFloat16: {
      const bool half = type == kv::ValueType::kFloat16;
      for (std::size_t i = 0; i < n; ++i) {
        const std::uint16_t h = half ? kv::float_to_fp16(in[i]) : kv::float_to_bf16(in[i]);
        std::memcpy(out + 2 * i, &h, 2);
      }
      return;
    }
  }
}

}  // namespace embscale::embedding
