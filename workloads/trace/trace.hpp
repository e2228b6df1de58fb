// Trace readers and writers: recorded batches of samples in HugeCTR's Norm and Raw formats and in
// embscale's own chunked, seekable format (workloads/README.md, "Trace formats", has the byte
// layouts). Every reader yields embscale::Batch (core/batch.hpp): unified-encoded int64 keys,
// sample-major bags, float labels and dense features.
//
// Reading validates as it goes: a truncated file, a bad header, a checksum mismatch, an nnz above
// the limit or a key outside its slot's key space is an InputError naming the file, the sample
// and the byte offset, what was expected and what came (core/byte_io.hpp). No reader allocates
// for a count before checking it against the bytes the file still holds, and none returns part of
// a sample.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/batch.hpp"

namespace embscale::trace {

enum class TraceFormat { kNorm, kRaw, kEmbscale };
std::string to_string(TraceFormat format);
// "norm", "raw", "embscale" (HugeCTR's capitalized "Norm" and "Raw" too). "parquet" and anything
// else are an InputError (Parquet: the message names scripts/parquet-to-embscale.py).
TraceFormat parse_trace_format(std::string_view name);

// The width of a key in a file. Norm: HugeCTR's solver.input_key_type (I32: unsigned int, I64:
// long long; HugeCTR's default is I32), which the Norm header does not record. embscale format:
// 4 (uint32) or 8 (int64).
enum class KeyWidth { kI32, kI64 };
inline int key_bytes(KeyWidth w) noexcept { return w == KeyWidth::kI32 ? 4 : 8; }
std::string to_string(KeyWidth width);  // "I32", "I64"
// "I32" or "I64" (any case); anything else is an InputError naming `field` ("--key-type").
KeyWidth parse_key_width(std::string_view name, const std::string& field);

// Limits of every format's header fields: larger values are corruption, not data.
inline constexpr std::int64_t kTraceMaxDim = std::int64_t{1} << 20;    // label_dim, dense_dim
inline constexpr std::int64_t kTraceMaxSlots = std::int64_t{1} << 20;  // slot_num

struct TraceShape {
  std::int32_t label_dim = 0;
  std::int32_t dense_dim = 0;
  std::int32_t num_slots = 0;
  // Each slot's key space (HugeCTR's slot_size_array): slot j's unified keys lie in
  // [offset_j, offset_j + size_j), offset_j the sum of the sizes before j. Empty: not known.
  std::vector<std::int64_t> slot_sizes;
  std::int64_t num_samples = 0;  // in the whole trace (every file of a Norm file list)
};

// Exclusive prefix sums of slot_sizes: the offset of each slot's key space; throws InputError when
// a size is not positive or the total passes 2^63 - 1.
std::vector<std::int64_t> slot_offsets(const std::vector<std::int64_t>& slot_sizes);

struct TraceReadOptions {
  // Checked against the file when set (HugeCTR's data layer configures them; a mismatch is an
  // error naming both). Raw needs all three and slot_sizes: its files carry no header.
  std::optional<std::int32_t> label_dim;
  std::optional<std::int32_t> dense_dim;
  std::optional<std::int32_t> num_slots;
  // Key spaces: keys outside them are errors (Norm and embscale: unified keys; Raw: per-slot local
  // keys, which the reader offsets into unified ones). An embscale file's own slot sizes are used
  // when this is empty.
  std::vector<std::int64_t> slot_sizes;
  // Norm only (the file does not record it). Unset: detected from the first samples, I32 (HugeCTR's
  // default) when both widths read them (norm_format.hpp, "Key width").
  std::optional<KeyWidth> norm_key_width;
  // Norm only: the checksum mode the caller expects (HugeCTR's "check": "Sum" true, "None" false);
  // a file of the other mode is an InputError. Unset: either mode, as the file's first bytes say.
  std::optional<bool> norm_checksum;
  // Most keys per bag (HugeCTR's max_nnz); 0: any count the file can hold. Negative nnz is always
  // an error.
  std::int64_t max_nnz = 0;
  bool raw_float_label_dense = false;  // Raw only: HugeCTR's float_label_dense
};

class TraceReader {
 public:
  virtual ~TraceReader() = default;
  virtual const TraceShape& shape() const = 0;
  // Replaces `out` with the next min(max_samples, samples left) samples (out.first_sample: the
  // index of the first of them in the trace); returns how many, 0 at the end.
  virtual std::int64_t read(std::int64_t max_samples, Batch& out) = 0;
  // Index of the next sample read() returns.
  virtual std::int64_t position() const = 0;
  // Moves to a sample in [0, num_samples]. Raw and embscale seek; Norm (variable-length samples
  // without an index) throws InputError saying to convert the trace to the embscale format.
  virtual void seek(std::int64_t sample) = 0;
  // What the reader assumed that the file does not say (a Norm key width it detected), one
  // sentence each, for the user to see; empty when it assumed nothing.
  virtual std::vector<std::string> notes() const { return {}; }
};

struct TraceWriteOptions {
  // Norm and embscale: the key width written (I32 refuses keys outside [0, 2^32)).
  KeyWidth key_width = KeyWidth::kI64;
  bool norm_checksum = false;          // Norm: error_check 1 (HugeCTR's "check": "Sum")
  bool raw_float_label_dense = false;  // Raw: float labels and dense instead of int
  std::int64_t samples_per_chunk = 0;  // embscale: 0 picks about 1 MiB of keys per chunk
};

class TraceWriter {
 public:
  virtual ~TraceWriter() = default;
  // Appends the batch's samples; its dims and slots must match the shape the writer was opened with.
  virtual void write(const Batch& batch) = 0;
  // Completes the file and renames it onto its path. A writer destroyed without close() leaves no
  // file (and the previous one, if any, in place).
  virtual void close() = 0;
  virtual std::int64_t samples_written() const = 0;
};

// The format of `path` from its first bytes: embscale by its magic, a Norm file list by a first
// line holding only a count, a Norm data file by a plausible header. Raw has no header and is
// never detected: the message says to pass the format (--format raw). Parquet ("PAR1") is named
// as not readable in this build.
TraceFormat detect_trace_format(const std::filesystem::path& path);

// A Norm path may be a data file or a file list (told apart by detection).
std::unique_ptr<TraceReader> open_trace_reader(const std::filesystem::path& path, TraceFormat format,
                                               const TraceReadOptions& options = {});
std::unique_ptr<TraceReader> open_trace_reader(const std::filesystem::path& path, const TraceReadOptions& options = {});
// shape.num_samples is ignored (the writer counts). Raw needs shape.slot_sizes.
std::unique_ptr<TraceWriter> open_trace_writer(const std::filesystem::path& path, TraceFormat format,
                                               const TraceShape& shape, const TraceWriteOptions& options = {});

}  // namespace embscale::trace
