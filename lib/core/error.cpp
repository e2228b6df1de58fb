#include "core/error.hpp"

#include <filesystem>

namespace embscale::detail {

void throw_expects_failure(const char* condition, const std::string& message, const char* file, int line) {
  const auto name = std::filesystem::path(file).filename().string();
  throw Error(message + " (expected " + condition + " at " + name + ":" + std::to_string(line) + ")");
}

}  // namespace embscale::detail
