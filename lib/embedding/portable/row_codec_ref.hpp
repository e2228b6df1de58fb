// A static table's 16-bit rows on host and device: one value of a row stored as fp16 or bf16,
// read as float and written back rounded to nearest even, with core/half_float.hpp's codec (the
// host table's, kv/row_codec.hpp), so a row stored on the device has the host table's bits.
#pragma once

#include <cstdint>

#include "core/half_float.hpp"
#include "kv/portable/host_device.hpp"

namespace embscale::embedding::portable {

EMBSCALE_HD inline float decode16(std::uint16_t bits, bool bfloat) {
  return bfloat ? to_float(BFloat16{bits}) : to_float(Half{bits});
}

EMBSCALE_HD inline std::uint16_t encode16(float value, bool bfloat) {
  return bfloat ? to_bfloat16(value).bits : to_half(value).bits;
}

}  // namespace embscale::embedding::portable
