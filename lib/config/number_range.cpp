#include "config/number_range.hpp"

#include <cstdint>

#include <nlohmann/json.hpp>

namespace embscale::config {
namespace {

// Integers as integers ("1", not "1.0"); the rest as JSON writes them.
std::string format_number(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::fabs(x) < 1e15)
    return std::to_string(static_cast<std::int64_t>(x));
  return nlohmann::json(x).dump();
}

}  // namespace

std::string NumberRange::describe() const {
  const std::string low = format_number(min);
  if (std::isinf(max)) return std::string("a number ") + (min_exclusive ? "> " : ">= ") + low;
  return "a number in " + std::string(min_exclusive ? "(" : "[") + low + ", " + format_number(max) +
         (max_exclusive ? ")" : "]");
}

}  // namespace embscale::config
