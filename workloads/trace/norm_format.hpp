// HugeCTR's Norm format ("Norm"; HugeCTR's data_readers/data_reader_worker.cpp,
// check_sum.hpp and data_generator.hpp, which this follows byte for byte).
//
// A data file, all little-endian:
//   header: DataSetHeader, 8 x long long: error_check (0 none, 1 checksum), number_of_records,
//           label_dim, dense_dim, slot_num, reserved[3] (ignored, as HugeCTR does)
//   number_of_records samples: float label[label_dim], float dense[dense_dim], then per slot
//           int nnz and nnz keys (unsigned int for input_key_type I32, long long for I64)
// Checksum mode (error_check 1, HugeCTR's "check": "Sum"): every record, the header included, is
// wrapped as
//   int length | length bytes | char checkbits
// where length counts the bytes between it and checkbits (the 64 header bytes; a sample's labels,
// dense values, nnz fields and keys) and checkbits is the sum of those bytes modulo 256 (HugeCTR's
// CheckSum::read adds each byte into a char; data_generator's DataWriter writes the same sum).
// So a checksum file starts with the int 64, then the header with error_check 1; a plain file
// starts with the long long 0. The reader tells them apart by those first bytes (HugeCTR instead
// takes the mode from its config and rejects a file of the other mode, as the reader does when
// TraceReadOptions::norm_checksum names one: a config's "check").
//
// Key width. The file does not record it (HugeCTR's solver.input_key_type, default I32). When the
// caller does not give it, the reader reads the first 64 samples of the first non-empty file with
// each width: a wrong width shows as an nnz out of range, a key outside its slot's key space, a
// checksum-mode length that its fields do not fill, or bytes left after the last sample. The width
// that reads them is used; when both do (e.g. no keys among them), I32, HugeCTR's default; the
// reader's notes() say which and why. When a given width fails and the other reads the file, the
// error says to set the other.
//
// Stricter than HugeCTR (which logs and skips): a wrong checkbits, a length that is not exactly
// its sample's bytes, an nnz below 0 or above max_nnz, bytes after the last record, and files of
// one list with different dims are InputErrors.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <vector>

#include "workloads/trace/trace.hpp"

namespace embscale::trace {

inline constexpr std::size_t kNormHeaderBytes = 64;
inline constexpr std::int32_t kNormChecksumLength = 64;  // the int that opens a checksum-mode file

// Reads the files in order as one trace (a file list's files, or one data file).
std::unique_ptr<TraceReader> open_norm_reader(const std::vector<std::filesystem::path>& files,
                                              const TraceReadOptions& options);
// One data file; key width and checksum mode from options.
std::unique_ptr<TraceWriter> open_norm_writer(const std::filesystem::path& path, const TraceShape& shape,
                                              const TraceWriteOptions& options);

// Whether the first bytes of a file could open a Norm data file (for detect_trace_format).
bool looks_like_norm_data(std::span<const std::byte> head);

}  // namespace embscale::trace
