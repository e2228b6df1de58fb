#include "collectives/element_type.hpp"

#include <algorithm>

namespace embscale::collectives {
std::vector<std::string> split_list(const std::string& text) {
  std::vector<std::string> items;
  std::string item;
  for (const char c : text + ",") {
    if (c != ',') {
      item += c;
      continue;
    }
    items.push_back(item);
    item.clear();
  }
  return items;
}

namespace {

// Parses "all" or a list of names of `table` (entries with a .name); the error names the flag.
template <class Entry>
std::vector<Entry> parse_names(const std::string& text, std::string_view flag, const std::vector<Entry>& table,
                               std::string_view what) {
  if (text == "all") return table;
  std::vector<Entry> chosen;
  for (const auto& name : split_list(text)) {
    const auto it = std::find_if(table.begin(), table.end(), [&](const Entry& e) { return e.name == name; });
    if (it == table.end()) {
      std::string choices;
      for (const auto& e : table) choices += std::string(e.name) + ", ";
      throw InputError(std::string(flag) + ": unknown " + std::string(what) + " \"" + name + "\"; expected " + choices +
                       "or all (comma-separated)");
    }
    if (std::none_of(chosen.begin(), chosen.end(), [&](const Entry& e) { return e.name == it->name; }))
      chosen.push_back(*it);
  }
  return chosen;
}

}  // namespace

const std::vector<ElementType>& element_types() {
  using comm::DataType;
  static const std::vector<ElementType> types{
      {"int8", DataType::kInt8, 1},         {"uint8", DataType::kUInt8, 1},   {"int32", DataType::kInt32, 4},
      {"uint32", DataType::kUInt32, 4},     {"int64", DataType::kInt64, 8},   {"uint64", DataType::kUInt64, 8},
      {"half", DataType::kFloat16, 2},      {"float", DataType::kFloat32, 4}, {"double", DataType::kFloat64, 8},
      {"bfloat16", DataType::kBFloat16, 2},
  };
  return types;
}

const ElementType& element_type(comm::DataType type) {
  for (const auto& t : element_types())
    if (t.type == type) return t;
  throw Error("collectives: no element type for this DataType");
}

const std::vector<ReduceOpName>& reduce_ops() {
  using comm::ReduceOp;
  static const std::vector<ReduceOpName> ops{
      {"sum", ReduceOp::kSum}, {"prod", ReduceOp::kProd}, {"max", ReduceOp::kMax},
      {"min", ReduceOp::kMin}, {"avg", ReduceOp::kAvg},
  };
  return ops;
}

std::string_view reduce_op_name(comm::ReduceOp op) {
  for (const auto& o : reduce_ops())
    if (o.op == op) return o.name;
  return "?";
}

std::vector<ElementType> parse_element_types(const std::string& text, std::string_view flag) {
  return parse_names(text, flag, element_types(), "data type");
}

std::vector<comm::ReduceOp> parse_reduce_ops(const std::string& text, std::string_view flag) {
  std::vector<comm::ReduceOp> ops;
  for (const auto& entry : parse_names(text, flag, reduce_ops(), "reduction op")) ops.push_back(entry.op);
  return ops;
}

}  // namespace embscale::collectives
