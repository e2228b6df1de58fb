// libFuzzer target for the embscale trace reader (workloads/trace/embscale_format.hpp): any bytes
// must read whole or fail with InputError, both in order and after seeks. The first input byte
// picks max_nnz, key spaces and the seeks; the rest is the file.
//
// Random mutations would almost never get past the checksums, so a custom mutator reseals half of
// its outputs (header, chunk, index and file checksums where the layout puts them): then the
// fields behind the checksums are fuzzed too.
//
// Seeds: EMBSCALE_FUZZ_WRITE_SEEDS=<dir> writes small valid traces (both key widths, chunks of 1
// to 4 samples, with and without key spaces) through the library's writer and exits.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <string>

#include "core/checksum.hpp"
#include "trace_fuzz.hpp"
#include "workloads/trace/embscale_format.hpp"
#include "workloads/trace/trace.hpp"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

using namespace embscale::trace;
using embscale::checksum64;

TraceReadOptions options_for(std::uint8_t selector) {
  TraceReadOptions o;
  o.max_nnz = (selector & 1) ? 2 : 0;
  return o;
}

void write_seeds(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int written = 0;
  for (std::uint8_t selector = 0; selector < 8; ++selector) {
    for (const std::int64_t n : {0, 1, 7}) {
      TraceShape shape{1, (selector >> 1) & 1, 2, {}, 0};
      if (selector & 4) shape.slot_sizes = {5, 100};
      TraceWriteOptions wo;
      wo.key_width = (selector & 2) ? KeyWidth::kI32 : KeyWidth::kI64;
      wo.samples_per_chunk = 1 + (written % 4);
      const auto file = dir / ("trace_" + std::to_string(written));
      auto writer = open_trace_writer(file, TraceFormat::kEmbscale, shape, wo);
      embscale::Batch b;
      b.num_samples = n;
      b.num_slots = 2;
      b.label_dim = 1;
      b.dense_dim = shape.dense_dim;
      for (std::int64_t s = 0; s < n; ++s) {
        b.labels.push_back(1.f);
        for (int d = 0; d < shape.dense_dim; ++d) b.dense.push_back(0.25f);
        for (int j = 0; j < 2; ++j) {
          for (std::int64_t k = 0; k < (s + j) % 3; ++k) b.keys.push_back(j * 5 + (s + k) % 5);
          b.offsets.push_back(static_cast<std::int64_t>(b.keys.size()));
        }
      }
      fuzz::finish_seed(*writer, b, file, selector);
      ++written;
    }
  }
  std::fprintf(stderr, "embscale_trace_fuzzer: wrote %d seeds to %s\n", written, dir.c_str());
}

std::uint64_t get_u64(const std::uint8_t* p) {
  std::uint64_t v;
  std::memcpy(&v, p, 8);
  return v;
}
void put_u64(std::uint8_t* p, std::uint64_t v) { std::memcpy(p, &v, 8); }

// Recomputes the checksums where a file with this header, index and trailer would have them.
void reseal(std::uint8_t* f, std::size_t n) {
  if (n < kEmbscaleTraceFixedHeaderBytes + 8 + kEmbscaleTraceTrailerBytes) return;
  std::uint32_t header_bytes;
  std::memcpy(&header_bytes, f + 12, 4);
  if (header_bytes < 56 || header_bytes > n - kEmbscaleTraceTrailerBytes) return;
  put_u64(f + header_bytes - 8, checksum64(f, header_bytes - 8));
  const std::size_t trailer = n - kEmbscaleTraceTrailerBytes;
  const std::uint64_t index_at = get_u64(f + trailer + 8);
  if (index_at >= header_bytes && index_at <= trailer - 24) {  // (index_at + 24 could wrap)
    const std::uint64_t count = std::min<std::uint64_t>(get_u64(f + index_at + 8), (trailer - index_at - 24) / 16);
    for (std::uint64_t c = 0; c < count; ++c) {
      const std::uint64_t at = get_u64(f + index_at + 16 + 16 * c + 8);
      const std::uint64_t end = c + 1 < count ? get_u64(f + index_at + 16 + 16 * (c + 1) + 8) : index_at;
      if (at < end && end <= index_at && end - at >= 16) put_u64(f + end - 8, checksum64(f + at, end - at - 8));
    }
    put_u64(f + trailer - 8, checksum64(f + index_at, trailer - 8 - index_at));
  }
  put_u64(f + n - 8, checksum64(f, n - 8));
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::initialize(write_seeds); }

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size, std::size_t max_size,
                                               unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 2 == 0 && size > 1) reseal(data + 1, size - 1);
  return size;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const auto path = fuzz::scratch_file("embscale-trace-fuzz");
  fuzz::put_file(path, data + 1, size - 1);
  const TraceReadOptions options = options_for(data[0]);
  fuzz::read_checked(path, TraceFormat::kEmbscale, options, data[0]);
  // Seeks: every position a reader accepts must read from there or fail with InputError.
  try {
    auto reader = open_trace_reader(path, TraceFormat::kEmbscale, options);
    const std::int64_t total = reader->shape().num_samples;
    for (std::int64_t at : {total / 2, std::int64_t{0}, total, total > 0 ? total - 1 : 0}) {
      reader->seek(at);
      embscale::Batch b;
      const std::int64_t got = reader->read(3, b);
      if (got != std::min<std::int64_t>(3, total - at) || b.first_sample != at) std::abort();
      embscale::validate_batch(b);
    }
  } catch (const embscale::InputError&) {}
  return 0;
}
