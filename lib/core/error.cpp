#include "core/error.hpp"

#include <filesystem>

namespace embscale::detail {

void throw_expects_failure(const char* condition, const std::string& message,
                           std::source_location where) {
  const auto file = std::filesystem::path(where.file_name()).filename().string();
  throw Error(message + " (expected " + condition + " at " + file + ":" +
              std::to_string(where.line()) + ")");
}

}  // namespace embscale::detail
