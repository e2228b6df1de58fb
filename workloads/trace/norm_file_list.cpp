#include "workloads/trace/norm_file_list.hpp"

#include <cctype>
#include <charconv>
#include <fstream>
#include <string>
#include <system_error>

#include "core/atomic_file.hpp"
#include "core/error.hpp"

namespace embscale::trace {
namespace {

// Lists past this many files are corruption (HugeCTR stores the count in an int).
constexpr long long kMaxFiles = 1LL << 31;

std::string trimmed(const std::string& line) {
  std::size_t end = line.size();
  while (end > 0 && (line[end - 1] == '\r' || line[end - 1] == ' ' || line[end - 1] == '\t')) --end;
  return line.substr(0, end);
}

}  // namespace

std::vector<std::filesystem::path> read_norm_file_list(const std::filesystem::path& list) {
  const std::string name = list.string();
  std::error_code ec;
  if (std::filesystem::is_directory(list, ec))
    throw InputError("cannot read Norm file list " + name + ": it is a directory");
  std::ifstream in(list);
  if (!in) throw InputError("cannot read Norm file list " + name + ": no such file or not readable");
  const auto at = [&](std::size_t line) { return name + ":" + std::to_string(line) + ": "; };

  std::string line;
  if (!std::getline(in, line)) throw InputError(at(1) + "expected the number of data files, got an empty file");
  const std::string first = trimmed(line);
  long long count = -1;
  const auto [end, err] = std::from_chars(first.data(), first.data() + first.size(), count);
  if (err != std::errc() || end != first.data() + first.size() || count < 1 || count > kMaxFiles)
    throw InputError(at(1) + "expected the number of data files (an integer in [1, 2^31]), got \"" + first + "\"");

  std::vector<std::filesystem::path> files;
  std::size_t number = 1;
  std::size_t empty_since = 0;  // first line of a run of empty lines (0: none)
  while (std::getline(in, line)) {
    ++number;
    const std::string path = trimmed(line);
    if (path.empty()) {
      if (empty_since == 0) empty_since = number;
      continue;
    }
    if (empty_since != 0)
      throw InputError(at(empty_since) + "expected a data file path, got an empty line (before line " +
                       std::to_string(number) + ")");
    if (static_cast<long long>(files.size()) == count)
      throw InputError(at(number) + "the first line counts " + std::to_string(count) +
                       " data files, but the list names more (\"" + path + "\")");
    if (!std::filesystem::is_regular_file(path, ec)) {
      const std::filesystem::path p(path);
      std::string hint;
      if (p.is_relative())
        hint = " (a relative path resolves against the working directory " +
               std::filesystem::current_path(ec).string() + ", as HugeCTR opens it; the list is in " +
               std::filesystem::absolute(list, ec).parent_path().string() + ")";
      throw InputError(at(number) + "data file " + path + " does not exist or is not a regular file" + hint);
    }
    files.emplace_back(path);
  }
  if (static_cast<long long>(files.size()) != count)
    throw InputError(at(number + 1) + "the first line counts " + std::to_string(count) +
                     " data files, but the list names " + std::to_string(files.size()));
  return files;
}

void write_norm_file_list(const std::filesystem::path& list, const std::vector<std::filesystem::path>& files) {
  if (files.empty()) throw InputError("cannot write Norm file list " + list.string() + ": it names no data file");
  std::string text = std::to_string(files.size()) + "\n";
  for (const auto& f : files) {
    const std::string s = f.string();
    if (s.empty() || s.find('\n') != std::string::npos || trimmed(s) != s)
      throw InputError("cannot write Norm file list " + list.string() + ": path \"" + s +
                       "\" is empty, holds a newline or ends in whitespace (a list line could not carry it)");
    text += s + "\n";
  }
  AtomicFile out(list);
  out.write(text.data(), text.size());
  out.commit();
}

bool looks_like_norm_file_list(std::span<const std::byte> head) {
  std::size_t i = 0;
  while (i < head.size() && std::isdigit(static_cast<unsigned char>(head[i]))) ++i;
  if (i == 0) return false;
  while (i < head.size() && (head[i] == std::byte{' '} || head[i] == std::byte{'\t'} || head[i] == std::byte{'\r'}))
    ++i;
  return i < head.size() && head[i] == std::byte{'\n'};
}

}  // namespace embscale::trace
