// The element types and reduction operations of `embscale collectives`, under nccl-tests' names
// (-d int8 ... bfloat16, --op sum ... avg), and the dispatch from a comm::DataType to its C++ type.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "comm/communicator.hpp"
#include "core/error.hpp"
#include "core/half_float.hpp"

namespace embscale::collectives {

struct ElementType {
  std::string_view name;  // nccl-tests' name: "float", "half", "bfloat16", ...
  comm::DataType type;
  std::size_t bytes;
};

// Every type nccl-tests offers that the CPU path has, in nccl-tests' order (-d all).
const std::vector<ElementType>& element_types();
const ElementType& element_type(comm::DataType type);

struct ReduceOpName {
  std::string_view name;  // "sum", "prod", "max", "min", "avg"
  comm::ReduceOp op;
};
const std::vector<ReduceOpName>& reduce_ops();
std::string_view reduce_op_name(comm::ReduceOp op);

// "a,b,c" -> {"a", "b", "c"} ("" -> one empty item, which no flag accepts).
std::vector<std::string> split_list(const std::string& text);

// "all", or a comma-separated list of names; throws InputError naming `flag` and the choices.
std::vector<ElementType> parse_element_types(const std::string& text, std::string_view flag);
std::vector<comm::ReduceOp> parse_reduce_ops(const std::string& text, std::string_view flag);

// Calls f(std::type_identity<T>{}) with the C++ type of `type` (every type but kBytes).
template <class F> decltype(auto) visit_element_type(comm::DataType type, F&& f) {
  using comm::DataType;
  switch (type) {
    case DataType::kInt8: return f(std::type_identity<std::int8_t>{});
    case DataType::kUInt8: return f(std::type_identity<std::uint8_t>{});
    case DataType::kInt32: return f(std::type_identity<std::int32_t>{});
    case DataType::kUInt32: return f(std::type_identity<std::uint32_t>{});
    case DataType::kInt64: return f(std::type_identity<std::int64_t>{});
    case DataType::kUInt64: return f(std::type_identity<std::uint64_t>{});
    case DataType::kFloat16: return f(std::type_identity<Half>{});
    case DataType::kFloat32: return f(std::type_identity<float>{});
    case DataType::kFloat64: return f(std::type_identity<double>{});
    case DataType::kBFloat16: return f(std::type_identity<BFloat16>{});
    case DataType::kBytes: break;
  }
  throw Error("collectives: no element type for raw bytes");
}

}  // namespace embscale::collectives
