// Rows stored in fp32, fp16 or bf16 and computed on in fp32: the one conversion of a run of
// values between a table's storage type and float (core/half_float.hpp's codec: round to nearest
// even), for the KV table's rows, its dump files, the tiered tables' dumps and the static embedding
// table. Values in memory may be unaligned (a row of halves inside a byte array): read by memcpy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "core/half_float.hpp"
#include "kv/value_types.hpp"

namespace embscale::kv {
namespace row_codec_detail {

template <typename Half16> void decode_16(const std::byte* in, float* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    Half16 h;
    std::memcpy(&h.bits, in + 2 * i, 2);
    out[i] = to_float(h);
  }
}

template <typename Half16, Half16 (*Encode)(float) noexcept>
void encode_16(const float* in, std::byte* out, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const Half16 h = Encode(in[i]);
    std::memcpy(out + 2 * i, &h.bits, 2);
  }
}

}  // namespace row_codec_detail

inline void decode_values(ValueType type, const std::byte* in, float* out, std::size_t n) noexcept {
  switch (type) {
    case ValueType::kFloat32: std::memcpy(out, in, n * sizeof(float)); return;
    case ValueType::kFloat16: row_codec_detail::decode_16<Half>(in, out, n); return;
    case ValueType::kBFloat16: row_codec_detail::decode_16<BFloat16>(in, out, n); return;
  }
}

inline void encode_values(ValueType type, const float* in, std::byte* out, std::size_t n) noexcept {
  switch (type) {
    case ValueType::kFloat32: std::memcpy(out, in, n * sizeof(float)); return;
    case ValueType::kFloat16: row_codec_detail::encode_16<Half, to_half>(in, out, n); return;
    case ValueType::kBFloat16: row_codec_detail::encode_16<BFloat16, to_bfloat16>(in, out, n); return;
  }
}

}  // namespace embscale::kv
