// MappedArray: a zero-filled byte array in pages the kernel can write back: anonymous memory,
// or, given a directory, an unnamed file there (O_TMPFILE, so nothing is left behind when the
// process ends, however it ends). A table whose rows live in a file can outgrow memory: the
// kernel keeps the hot pages resident and writes cold ones to the file. It is scratch space,
// not persistence (dump/load is).
#pragma once

#include <cstddef>
#include <string>

namespace embscale::kv {

class MappedArray {
 public:
  MappedArray() = default;
  // Throws InputError naming the directory when the file cannot be made or sized (ENOSPC).
  MappedArray(std::size_t bytes, const std::string& directory);
  ~MappedArray();
  MappedArray(MappedArray&& other) noexcept;
  MappedArray& operator=(MappedArray&& other) noexcept;
  MappedArray(const MappedArray&) = delete;
  MappedArray& operator=(const MappedArray&) = delete;

  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }
  std::size_t size() const noexcept { return bytes_; }
  bool file_backed() const noexcept { return fd_ >= 0; }

 private:
  void release() noexcept;

  std::byte* data_ = nullptr;
  std::size_t bytes_ = 0;
  int fd_ = -1;
};

}  // namespace embscale::kv
