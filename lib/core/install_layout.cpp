#include "core/install_layout.hpp"

#include <system_error>

namespace embscale {

std::filesystem::path executable_directory() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return {};
  return exe.parent_path();
}

std::filesystem::path shared_data_directory() {
  const std::filesystem::path dir = executable_directory();
  if (dir.empty()) return {};
  return dir.parent_path() / "share" / "embscale";
}

}  // namespace embscale
