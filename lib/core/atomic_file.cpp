#include "core/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"
#include "core/temp_files.hpp"

namespace embscale {
namespace {

constexpr std::size_t kBufferBytes = std::size_t{1} << 20;

std::string errno_text() { return std::strerror(errno); }

// The rename is durable once the directory is synced; a failure here is not fatal (the file is
// complete and in place), so it is ignored.
void sync_directory(const std::filesystem::path& dir) noexcept {
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  (void)::fsync(fd);
  ::close(fd);
}

void write_all(int fd, const std::byte* p, std::size_t n, std::uint64_t offset, const std::filesystem::path& path) {
  while (n > 0) {
    const ssize_t done = ::pwrite(fd, p, n, static_cast<off_t>(offset));
    if (done < 0 && errno == EINTR) continue;
    if (done < 0) throw Error("cannot write " + path.string() + ": " + errno_text());
    p += done;
    n -= static_cast<std::size_t>(done);
    offset += static_cast<std::uint64_t>(done);
  }
}

}  // namespace

AtomicFile::AtomicFile(const std::filesystem::path& final_path) : final_(final_path) {
  static std::atomic<std::uint64_t> files{0};
  remove_stale_temp_files(final_path);  // orphans of writers killed outright
  temp_ = temporary_path_for(final_path);
  temp_ += "." + std::to_string(files.fetch_add(1));
  register_temp_file(temp_);  // before the file exists: the fatal path may remove it at any time
  fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    const std::string why = errno_text();
    unregister_temp_file(temp_);
    throw InputError("cannot create " + temp_.string() + ": " + why);
  }
  buffer_.reserve(kBufferBytes);
}

AtomicFile::~AtomicFile() {
  if (committed_) return;
  if (fd_ >= 0) ::close(fd_);
  std::error_code ignored;
  std::filesystem::remove(temp_, ignored);
  unregister_temp_file(temp_);
}

void AtomicFile::flush() {
  write_all(fd_, buffer_.data(), buffer_.size(), written_, temp_);
  written_ += buffer_.size();
  buffer_.clear();
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  EMBSCALE_EXPECTS(!committed_, "a committed file is not written again");
  if (buffer_.size() + bytes.size() > kBufferBytes) flush();
  if (bytes.size() >= kBufferBytes) {
    write_all(fd_, bytes.data(), bytes.size(), written_, temp_);
    written_ += bytes.size();
    return;
  }
  buffer_.insert(buffer_.end(), bytes.begin(), bytes.end());
}

void AtomicFile::patch(std::uint64_t offset, std::span<const std::byte> bytes) {
  EMBSCALE_EXPECTS(!committed_ && offset + bytes.size() <= bytes_written(), "patch only bytes already written");
  flush();
  write_all(fd_, bytes.data(), bytes.size(), offset, temp_);
}

void AtomicFile::commit() {
  EMBSCALE_EXPECTS(!committed_, "commit once");
  flush();
  // fsync, then close: the data is on disk before the rename makes it the file.
  if (::fsync(fd_) != 0) throw Error("cannot fsync " + temp_.string() + ": " + errno_text());
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) throw Error("cannot close " + temp_.string() + ": " + errno_text());
  commit_temp_file(temp_, final_);
  committed_ = true;
  sync_directory(final_.parent_path());
}

}  // namespace embscale
