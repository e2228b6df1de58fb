// Disk space a report will take, claimed before it is written. A full disk then fails one call,
// on every rank alike, instead of failing inside parallel HDF5's collective close on one rank,
// where the other ranks wait forever in a collective the failed rank never joins (measured: rank
// 0 in an MPI_Barrier of the metadata flush, rank 1 in an MPI_Bcast of the file truncation).
//
// The claim is a reservation of blocks after the file's end (fallocate with FALLOC_FL_KEEP_SIZE):
// the file's size does not change, HDF5 sees nothing, and the writes that extend the file land
// in blocks the filesystem has already given it, so no other process can take them meanwhile.
// A filesystem without fallocate reserves nothing (the check of free space is all it gets).
#pragma once

#include <cstdint>
#include <filesystem>

namespace embscale::report {

// Free bytes an unprivileged writer may use on the filesystem holding `path` (statvfs).
std::uint64_t free_bytes(const std::filesystem::path& path);

enum class Reservation { kReserved, kUnsupported, kNoSpace };
// Reserves `bytes` after the current end of `file` (which exists). kNoSpace: ENOSPC, nothing
// reserved; kUnsupported: the filesystem cannot reserve (nothing reserved, nothing failed).
// Another failure throws Error naming the file and the system's message.
Reservation reserve_after_end(const std::filesystem::path& file, std::uint64_t bytes);

// Gives back what is reserved after the end of `file` (a committed report keeps only its own
// blocks). Errors are ignored: the file is whole either way.
void release_after_end(const std::filesystem::path& file) noexcept;

// About how many bytes a report takes: `runs` runs of `iterations` iterations on `ranks` ranks,
// each run's per-rank columns (phases and counters, 8 bytes per iteration and rank; a generous
// count of them) plus its HDF5 metadata (groups, attributes, the summary row: about 96 KiB a run,
// measured on the shipped configs' reports), and the file's own metadata and config text.
std::uint64_t expected_report_bytes(std::int64_t runs, std::int64_t iterations, int ranks,
                                    std::uint64_t metadata_bytes);

}  // namespace embscale::report
