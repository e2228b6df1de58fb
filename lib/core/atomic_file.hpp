// AtomicFile: a file written under a temporary name and renamed onto its final path when complete
// (core/temp_files.hpp), so a reader never sees a half-written file and a failed write leaves the
// previous file, if any, in place.
//
// The temporary file is "<dir>/.<name>.tmp.<host>.<pid>.<n>" (n counts this process's atomic
// files, so two writers of one path do not share it). It is registered while it exists, so the
// fatal-error path removes it; a writer destroyed without commit() (an exception) removes it too.
// A process killed outright leaves it; the next AtomicFile of the same path on the same host
// removes it (core/temp_files.hpp's remove_stale_temp_files). commit()
// flushes, fsyncs, renames and fsyncs the directory: once it returns the file is durable.
// Writes are buffered (small appends cost a memcpy); patch() rewrites bytes already written (a
// header whose counts are known only at the end).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <vector>

namespace embscale {

class AtomicFile {
 public:
  explicit AtomicFile(const std::filesystem::path& final_path);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  void write(std::span<const std::byte> bytes);
  void write(const void* p, std::size_t n) { write({static_cast<const std::byte*>(p), n}); }
  // Overwrites bytes [offset, offset + size) already written.
  void patch(std::uint64_t offset, std::span<const std::byte> bytes);
  std::uint64_t bytes_written() const noexcept { return written_ + buffer_.size(); }
  void commit();

  const std::filesystem::path& temporary_path() const noexcept { return temp_; }

 private:
  void flush();

  std::filesystem::path final_;
  std::filesystem::path temp_;
  int fd_ = -1;
  bool committed_ = false;
  std::uint64_t written_ = 0;  // bytes in the file (the buffer's are not yet)
  std::vector<std::byte> buffer_;
};

}  // namespace embscale
