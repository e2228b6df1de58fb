#include "core/temp_files.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
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

// The first label of the host name, in characters a file name and temp_file_writer's parse
// accept: letters, digits, '-' (anything else becomes '-').
const std::string& host_label() {
  static const std::string label = [] {
    char name[256] = {};
    if (::gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return std::string("unknown");
    std::string text(name, std::strcspn(name, "."));
    for (char& c : text)
      if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-') c = '-';
    return text;
  }();
  return label;
}

// "." + name + ".tmp.": what every temporary file of `final_path` begins with.
std::string temp_prefix_of(const std::filesystem::path& final_path) {
  return "." + final_path.filename().string() + ".tmp.";
}

// A process with this pid is running on this host (EPERM: it exists, owned by someone else).
// A zombie has ended: a launcher that returns before the init process reaps its killed ranks
// leaves them as zombies for a moment, and their files are orphans already.
bool process_running(long pid) {
  if (::kill(static_cast<pid_t>(pid), 0) != 0 && errno != EPERM) return false;
  // /proc/<pid>/stat: "<pid> (<command>) <state> ..."; the command may hold ')' itself.
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  const std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const auto paren = text.rfind(')');
  if (paren == std::string::npos || paren + 2 >= text.size()) return true;  // cannot tell: running
  const char state = text[paren + 2];
  return state != 'Z' && state != 'X';
}

std::filesystem::path directory_of(const std::filesystem::path& path) {
  return path.parent_path().empty() ? std::filesystem::path(".") : path.parent_path();
}

// Removes the regular files of `directory` for which remove(path) is true.
template <class Remove>
std::vector<std::filesystem::path> remove_files_in(const std::filesystem::path& directory, Remove remove) noexcept {
  std::vector<std::filesystem::path> removed;
  try {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(directory, ec)) {
      std::error_code type_ec;
      if (!entry.is_regular_file(type_ec) || !remove(entry.path())) continue;
      std::error_code remove_ec;
      if (std::filesystem::remove(entry.path(), remove_ec)) removed.push_back(entry.path());
    }
  } catch (...) {  // an allocation failure or a directory that vanished: leave the rest
  }
  return removed;
}

}  // namespace

std::filesystem::path temporary_path_for(const std::filesystem::path& final_path) {
  return final_path.parent_path() / (temp_prefix_of(final_path) + host_label() + "." + std::to_string(::getpid()));
}

namespace {

// The writer in "<host>.<pid>[.<anything>]", the part of a temporary name after ".tmp.".
std::optional<TempFileWriter> writer_in(const std::string& rest) {
  const auto dot = rest.find('.');
  if (dot == 0 || dot == std::string::npos) return std::nullopt;
  const char* first = rest.data() + dot + 1;
  const char* last = rest.data() + rest.size();
  long pid = 0;
  const auto [end, ec] = std::from_chars(first, last, pid);
  if (ec != std::errc() || end == first || pid <= 0 || (end != last && *end != '.')) return std::nullopt;
  return TempFileWriter{rest.substr(0, dot), pid};
}

}  // namespace

std::optional<TempFileWriter> temp_file_writer(const std::filesystem::path& temp,
                                               const std::filesystem::path& final_path) {
  const std::string name = temp.filename().string();
  const std::string prefix = temp_prefix_of(final_path);
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  return writer_in(name.substr(prefix.size()));
}

std::vector<std::filesystem::path> remove_stale_temp_files(const std::filesystem::path& final_path) noexcept {
  return remove_files_in(directory_of(final_path), [&](const std::filesystem::path& file) {
    // ".<any name>.tmp.<host>.<pid>[.<n>]": host labels hold no dot, so the last ".tmp." starts
    // the writer even when the name itself contains one.
    const std::string name = file.filename().string();
    const auto tmp = name.rfind(".tmp.");
    if (name.empty() || name[0] != '.' || tmp == std::string::npos || tmp < 2) return false;
    const auto writer = writer_in(name.substr(tmp + 5));
    return writer && writer->host == host_label() && writer->pid != static_cast<long>(::getpid()) &&
           !process_running(writer->pid);
  });
}

std::vector<std::filesystem::path> remove_temp_files_in(const std::filesystem::path& directory) noexcept {
  return remove_files_in(directory, [](const std::filesystem::path& file) {
    const std::string name = file.filename().string();
    const auto tmp = name.find(".tmp.");
    return name.size() > 1 && name[0] == '.' && tmp != std::string::npos && tmp > 1;
  });
}

std::string why_not_replaceable(const std::filesystem::path& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);  // follows a link: what it points at
  if (ec || !std::filesystem::exists(status) || std::filesystem::is_regular_file(status)) return "";
  const char* kind = std::filesystem::is_character_file(status) ? "a character device"
                     : std::filesystem::is_block_file(status)   ? "a block device"
                     : std::filesystem::is_fifo(status)         ? "a pipe"
                     : std::filesystem::is_socket(status)       ? "a socket"
                     : std::filesystem::is_directory(status)    ? "a directory"
                                                                : "not a regular file";
  return std::string("it is ") + kind +
         " (files are written under a temporary name and renamed over the path, which would replace it; "
         "give a file's path)";
}

std::string why_file_cannot_be_created(const std::filesystem::path& path) {
  const auto dir = directory_of(path);
  std::error_code ec;
  if (path.filename().empty()) return "the path names no file";
  if (!std::filesystem::exists(dir, ec)) return "directory " + dir.string() + " does not exist";
  if (!std::filesystem::is_directory(dir, ec)) return dir.string() + " is not a directory";
  if (std::filesystem::is_directory(path, ec)) return "it is a directory";
  if (const std::string why = why_not_replaceable(path); !why.empty()) return why;
  // The honest test: create a file beside the target (a name of the temporary-file family, so
  // that a crash right here leaves a file remove_stale_temp_files recognises) and remove it.
  const auto probe = temporary_path_for(path).string() + ".probe";
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    const int error = errno;
    if (error == EEXIST) return "";  // files can be created there; this one is another probe's
    const std::string why = std::strerror(error);
    if (error == EACCES || error == EPERM || error == EROFS)
      return "directory " + dir.string() + " is not writable (" + why + ")";
    return "cannot create a file in directory " + dir.string() + " (" + why + ")";
  }
  ::close(fd);
  ::unlink(probe.c_str());
  return "";
}

void check_file_can_be_created(const std::filesystem::path& path, const std::string& what) {
  if (const std::string why = why_file_cannot_be_created(path); !why.empty())
    throw InputError(path.string() + ": cannot create " + what + ": " + why);
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
  // Never renamed over a device, pipe or socket (-o /dev/null): the check before writing says so
  // first; this one holds for every writer.
  if (const std::string why = why_not_replaceable(final_path); !why.empty())
    throw Error("cannot write " + final_path.string() + ": " + why);
  std::error_code ec;
  std::filesystem::rename(temp, final_path, ec);
  if (ec) throw Error("cannot rename " + temp.string() + " to " + final_path.string() + ": " + ec.message());
  unregister_temp_file(temp);
}

}  // namespace embscale
