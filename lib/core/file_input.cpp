#include "core/file_input.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "core/error.hpp"

namespace embscale {
namespace {
constexpr std::size_t kReadAhead = std::size_t{1} << 20;
}

FileInput::FileInput(const std::filesystem::path& path, const std::string& what) : name_(path.string()) {
  const std::string prefix = "cannot read " + what + " " + name_ + ": ";
  fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ < 0) throw InputError(prefix + (errno == ENOENT ? std::string("no such file") : std::strerror(errno)));
  struct stat st {};
  if (::fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string why = S_ISDIR(st.st_mode) ? "it is a directory" : "not a regular file";
    ::close(fd_);
    fd_ = -1;
    throw InputError(prefix + why);
  }
  size_ = static_cast<std::uint64_t>(st.st_size);
}

FileInput::~FileInput() {
  if (fd_ >= 0) ::close(fd_);
}

void FileInput::seek(std::uint64_t offset) {
  EMBSCALE_EXPECTS(offset <= size_, "seek beyond the end of " + name_);
  // Inside the buffer: move within it (a reader stepping back a few bytes rereads nothing).
  const std::uint64_t buffer_start = offset_ - pos_;
  if (offset >= buffer_start && offset <= buffer_start + end_) {
    pos_ = static_cast<std::size_t>(offset - buffer_start);
  } else {
    pos_ = end_ = 0;
  }
  offset_ = offset;
}

// Makes at least n bytes available at pos_ (the caller checked that the file holds them).
void FileInput::fill(std::size_t n) {
  if (pos_ > 0) {
    std::memmove(buffer_.data(), buffer_.data() + pos_, end_ - pos_);
    end_ -= pos_;
    pos_ = 0;
  }
  // Read ahead, but never past the end of the file, so the buffer is bounded by the file's size.
  const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(std::max(n, kReadAhead), left()));
  if (buffer_.size() < want) buffer_.resize(want);
  while (end_ < want) {
    const ssize_t got = ::pread(fd_, buffer_.data() + end_, want - end_, static_cast<off_t>(offset_ + end_));
    if (got < 0 && errno == EINTR) continue;
    if (got < 0)
      throw InputError("cannot read " + name_ + " at byte " + std::to_string(offset_ + end_) + ": " +
                       std::strerror(errno));
    if (got == 0) {  // the file shrank while being read
      throw_truncated(name_, "reading", offset_ + end_, offset_ + want, offset_ + end_);
    }
    end_ += static_cast<std::size_t>(got);
  }
}

const std::byte* FileInput::take(std::size_t n, const std::string& field) {
  if (n > left()) throw_truncated(name_, field, offset_, offset_ + n, size_);
  if (end_ - pos_ < n) fill(n);
  const std::byte* p = buffer_.data() + pos_;
  pos_ += n;
  offset_ += n;
  return p;
}

}  // namespace embscale
