#include "workloads/trace/trace.hpp"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "core/error.hpp"
#include "core/file_input.hpp"
#include "core/temp_files.hpp"
#include "workloads/trace/embscale_format.hpp"
#include "workloads/trace/norm_file_list.hpp"
#include "workloads/trace/norm_format.hpp"
#include "workloads/trace/raw_format.hpp"

namespace embscale::trace {
namespace {

// Debian packages no Apache Arrow / Parquet C++ library, so this build cannot read Parquet.
const char* const kParquetAdvice =
    "Parquet is not readable in this build (no Debian package of a C++ Parquet reader); convert it with "
    "scripts/parquet-to-embscale.py (pyarrow), which reads HugeCTR's Parquet layout and its _metadata.json "
    "and writes a Norm file";

constexpr std::size_t kDetectBytes = 72;  // a checksum-mode Norm header (4 + 64) and more

// A Norm data file's header holds zero bytes (error_check 0, or the int 64 of checksum mode);
// bytes without any are text: given as a Norm trace, a file list, even one whose first line is not
// a count, whose reader then says what that line should be (rather than the data reader's
// "truncated header"). Detection without a format does not guess from text.
bool looks_like_text(std::span<const std::byte> head) {
  return !head.empty() && std::find(head.begin(), head.end(), std::byte{0}) == head.end();
}

}  // namespace

std::string to_string(TraceFormat format) {
  switch (format) {
    case TraceFormat::kNorm: return "norm";
    case TraceFormat::kRaw: return "raw";
    case TraceFormat::kEmbscale: return "embscale";
  }
  return "?";
}

std::string to_string(KeyWidth width) { return width == KeyWidth::kI32 ? "I32" : "I64"; }

KeyWidth parse_key_width(std::string_view name, const std::string& field) {
  std::string upper(name);
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "I32") return KeyWidth::kI32;
  if (upper == "I64") return KeyWidth::kI64;
  throw InputError(field + ": expected \"I32\" or \"I64\" (HugeCTR's input_key_type), got \"" + std::string(name) +
                   "\"");
}

TraceFormat parse_trace_format(std::string_view name) {
  std::string lower(name);
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (lower == "norm") return TraceFormat::kNorm;
  if (lower == "raw") return TraceFormat::kRaw;
  if (lower == "embscale") return TraceFormat::kEmbscale;
  if (lower == "parquet") throw InputError("trace format \"" + std::string(name) + "\": " + kParquetAdvice);
  throw InputError("trace format: expected norm, raw or embscale, got \"" + std::string(name) + "\"");
}

TraceFormat detect_trace_format(const std::filesystem::path& path) {
  FileInput in(path, "trace");
  const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(in.size(), kDetectBytes));
  const std::byte* p = in.take(n, "first bytes");
  const std::span<const std::byte> head(p, n);
  if (n >= 8 && std::memcmp(p, kEmbscaleTraceMagic, 8) == 0) return TraceFormat::kEmbscale;
  if (n >= 4 && std::memcmp(p, "PAR1", 4) == 0) throw InputError(path.string() + ": a Parquet file. " + kParquetAdvice);
  if (looks_like_norm_file_list(head) || looks_like_norm_data(head)) return TraceFormat::kNorm;
  throw InputError(path.string() + ": cannot tell the trace format from the first " + std::to_string(n) +
                   " bytes: not an embscale trace (magic \"EMBSTRCE\"), not a Norm file list (a first line holding the "
                   "number of files), not a Norm data file (a header with error_check 0 or 1 and dims in range). A Raw "
                   "file has no header and is never detected: name the format (--format raw) with its label_dim, "
                   "dense_dim and slot_size_array");
}

std::unique_ptr<TraceReader> open_trace_reader(const std::filesystem::path& path, TraceFormat format,
                                               const TraceReadOptions& options) {
  switch (format) {
    case TraceFormat::kNorm: {
      std::vector<std::filesystem::path> files{path};
      {
        FileInput in(path, "Norm trace");
        const std::size_t n = static_cast<std::size_t>(std::min<std::uint64_t>(in.size(), kDetectBytes));
        const std::span<const std::byte> head(in.take(n, "first bytes"), n);
        if (looks_like_norm_file_list(head) || looks_like_text(head)) files = read_norm_file_list(path);
      }
      return open_norm_reader(files, options);
    }
    case TraceFormat::kRaw: return open_raw_reader(path, options);
    case TraceFormat::kEmbscale: return open_embscale_reader(path, options);
  }
  throw Error("unknown trace format");
}

std::unique_ptr<TraceReader> open_trace_reader(const std::filesystem::path& path, const TraceReadOptions& options) {
  return open_trace_reader(path, detect_trace_format(path), options);
}

std::unique_ptr<TraceWriter> open_trace_writer(const std::filesystem::path& path, TraceFormat format,
                                               const TraceShape& shape, const TraceWriteOptions& options) {
  check_file_can_be_created(path, "trace");
  switch (format) {
    case TraceFormat::kNorm: return open_norm_writer(path, shape, options);
    case TraceFormat::kRaw: return open_raw_writer(path, shape, options);
    case TraceFormat::kEmbscale: return open_embscale_writer(path, shape, options);
  }
  throw Error("unknown trace format");
}

}  // namespace embscale::trace
