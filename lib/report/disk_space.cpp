#include "report/disk_space.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "core/error.hpp"

namespace embscale::report {
namespace {

// An open file descriptor, closed on scope exit.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0) ::close(fd);
  }
};

// Columns a run records per rank, counted generously (phases of the longest scheme with dense
// layers, the counters): an estimate above the measured reports, so a run that passes the check
// has room.
constexpr std::uint64_t kColumnsPerRank = 48;
constexpr std::uint64_t kMetadataPerRun = 96 * 1024;
constexpr std::uint64_t kFileMetadata = 64 * 1024;

}  // namespace

std::uint64_t free_bytes(const std::filesystem::path& path) {
  struct statvfs info {};
  if (::statvfs(path.c_str(), &info) != 0)
    throw Error(path.string() + ": cannot read the free space of its filesystem: " + std::strerror(errno));
  return static_cast<std::uint64_t>(info.f_bavail) * static_cast<std::uint64_t>(info.f_frsize);
}

Reservation reserve_after_end(const std::filesystem::path& file, std::uint64_t bytes) {
  if (bytes == 0) return Reservation::kReserved;
  const Descriptor d{::open(file.c_str(), O_WRONLY | O_CLOEXEC)};
  if (d.fd < 0) throw Error(file.string() + ": cannot open it to reserve space: " + std::strerror(errno));
  struct stat st {};
  if (::fstat(d.fd, &st) != 0) throw Error(file.string() + ": " + std::strerror(errno));
  if (::fallocate(d.fd, FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(bytes)) == 0) return Reservation::kReserved;
  if (errno == ENOSPC || errno == EDQUOT) return Reservation::kNoSpace;
  if (errno == EOPNOTSUPP || errno == ENOSYS) return Reservation::kUnsupported;
  throw Error(file.string() + ": reserving " + std::to_string(bytes) + " bytes: " + std::strerror(errno));
}

void release_after_end(const std::filesystem::path& file) noexcept {
  const Descriptor d{::open(file.c_str(), O_WRONLY | O_CLOEXEC)};
  struct stat st {};
  if (d.fd < 0 || ::fstat(d.fd, &st) != 0) return;
  // Blocks past the end are those a reservation left; a hole punched there frees them.
  const auto allocated = static_cast<off_t>(st.st_blocks) * 512;
  if (allocated > st.st_size)
    (void)::fallocate(d.fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, st.st_size, allocated);
}

std::uint64_t expected_report_bytes(std::int64_t runs, std::int64_t iterations, int ranks,
                                    std::uint64_t metadata_bytes) {
  const auto r = static_cast<std::uint64_t>(std::max<std::int64_t>(runs, 0));
  const auto per_run = static_cast<std::uint64_t>(std::max<std::int64_t>(iterations, 0)) *
                           static_cast<std::uint64_t>(std::max(ranks, 1)) * kColumnsPerRank * sizeof(double) +
                       kMetadataPerRun;
  return kFileMetadata + metadata_bytes + r * per_run;
}

}  // namespace embscale::report
