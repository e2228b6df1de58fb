// FileInput: buffered reads of a file that may be far larger than memory, at tracked offsets, with
// the errors of core/byte_io.hpp (the file, the byte offset, the field). The trace readers stream
// through it; a reader never asks for more bytes than the file still has, so a corrupted count
// fails as a truncation instead of an allocation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "core/byte_io.hpp"

namespace embscale {

class FileInput {
 public:
  // Opens `path` for reading; `what` says what the caller expected there, for the message when it
  // is missing, a directory or unreadable ("cannot read <what> <path>: no such file").
  FileInput(const std::filesystem::path& path, const std::string& what);
  ~FileInput();
  FileInput(const FileInput&) = delete;
  FileInput& operator=(const FileInput&) = delete;

  const std::string& name() const noexcept { return name_; }
  std::uint64_t size() const noexcept { return size_; }
  std::uint64_t offset() const noexcept { return offset_; }
  std::uint64_t left() const noexcept { return size_ - offset_; }

  // The next n bytes (valid until the next take or seek); a truncation error naming `field` when
  // fewer than n are left.
  const std::byte* take(std::size_t n, const std::string& field);
  template <typename T> T read(const std::string& field) {
    T v;
    std::memcpy(&v, take(sizeof v, field), sizeof v);
    return v;
  }
  void seek(std::uint64_t offset);

 private:
  void fill(std::size_t n);

  std::string name_;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::uint64_t offset_ = 0;  // file offset of the next byte handed out
  // buffer_[pos_, end_) holds the file's bytes from offset_ on.
  std::vector<std::byte> buffer_;
  std::size_t pos_ = 0;
  std::size_t end_ = 0;
};

}  // namespace embscale
