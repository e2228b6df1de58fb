#include "kv/mapped_array.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <utility>

#include "core/error.hpp"

namespace embscale::kv {

MappedArray::MappedArray(std::size_t bytes, const std::string& directory) : bytes_(bytes) {
  if (bytes == 0) return;
  int flags = MAP_PRIVATE | MAP_ANONYMOUS;
  if (!directory.empty()) {
    fd_ = ::open(directory.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd_ < 0)
      throw InputError("table rows directory '" + directory + "': cannot create a file there (" + std::strerror(errno) +
                       "); expected an existing writable directory");
    // posix_fallocate reserves the blocks now, so a full disk fails here, not as SIGBUS later.
    if (const int rc = ::posix_fallocate(fd_, 0, static_cast<off_t>(bytes)); rc != 0) {
      ::close(fd_);
      fd_ = -1;
      throw InputError("table rows directory '" + directory + "': cannot reserve " + std::to_string(bytes) +
                       " bytes (" + std::strerror(rc) + ")");
    }
    flags = MAP_SHARED;
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, flags, fd_, 0);
  if (p == MAP_FAILED) {
    const int err = errno;
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
    throw Error("mmap of " + std::to_string(bytes) + " bytes failed: " + std::strerror(err));
  }
  data_ = static_cast<std::byte*>(p);
  if (fd_ < 0) {
    // Rows are read and written at random: 2 MiB pages (where transparent huge pages are
    // "madvise") spare most TLB misses. The pages are then touched at once, as a
    // zero-initialised vector's would be, so page faults fall on the allocation (construction,
    // rehash), not on the first calls that write rows.
    ::madvise(p, bytes, MADV_HUGEPAGE);  // advice: failure (no THP) changes nothing
    constexpr std::size_t kPage = 4096;
    for (std::size_t at = 0; at < bytes; at += kPage) data_[at] = std::byte{0};
  }
}

MappedArray::~MappedArray() { release(); }

MappedArray::MappedArray(MappedArray&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), bytes_(std::exchange(other.bytes_, 0)),
      fd_(std::exchange(other.fd_, -1)) {}

MappedArray& MappedArray::operator=(MappedArray&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

void MappedArray::release() noexcept {
  if (data_) ::munmap(data_, bytes_);
  if (fd_ >= 0) ::close(fd_);
  data_ = nullptr;
  bytes_ = 0;
  fd_ = -1;
}

}  // namespace embscale::kv
