// Storage types of table rows: float32, IEEE fp16 and bfloat16. Rows are stored in the table's
// type and computed on in float; a run of values converts through kv/row_codec.hpp, on core's
// one codec of the 16-bit types (core/half_float.hpp: round to nearest even, NaN kept NaN and made
// quiet, overflow to infinity).
#pragma once

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

}  // namespace embscale::kv
