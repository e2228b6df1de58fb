#include "core/temp_files.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <string>
#include <system_error>
#include <vector>

#include "core/error.hpp"

namespace embscale {
namespace {

std::mutex& registry_mutex() {
  static std::mutex m;
  return m;
}
std::vector<std::filesystem::path>& registry() {
  static std::vector<std::filesystem::path> files;
  return files;
}

}  // namespace

std::string why_file_cannot_be_created(const std::filesystem::path& path) {
  const auto dir = path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
  std::error_code ec;
  if (path.filename().empty()) return "the path names no file";
  if (!std::filesystem::exists(dir, ec)) return "directory " + dir.string() + " does not exist";
  if (!std::filesystem::is_directory(dir, ec)) return dir.string() + " is not a directory";
  if (::access(dir.c_str(), W_OK | X_OK) != 0)
    return "directory " + dir.string() + " is not writable (" + std::strerror(errno) + ")";
  if (std::filesystem::is_directory(path, ec)) return "it is a directory";
  return "";
}

std::filesystem::path temporary_path_for(const std::filesystem::path& final_path) {
  auto name = "." + final_path.filename().string() + ".tmp." + std::to_string(::getpid());
  return final_path.parent_path() / name;
}

void register_temp_file(const std::filesystem::path& path) {
  std::lock_guard lock(registry_mutex());
  registry().push_back(path);
}

void unregister_temp_file(const std::filesystem::path& path) {
  std::lock_guard lock(registry_mutex());
  auto& files = registry();
  files.erase(std::remove(files.begin(), files.end(), path), files.end());
}

void remove_registered_temp_files() noexcept {
  std::lock_guard lock(registry_mutex());
  for (const auto& path : registry()) {
    std::error_code ignored;
    std::filesystem::remove(path, ignored);
  }
  registry().clear();
}

void commit_temp_file(const std::filesystem::path& temp, const std::filesystem::path& final_path) {
  std::error_code ec;
  std::filesystem::rename(temp, final_path, ec);
  if (ec) throw Error("cannot rename " + temp.string() + " to " + final_path.string() + ": " + ec.message());
  unregister_temp_file(temp);
}

}  // namespace embscale
