// Shared by the trace readers' libFuzzer targets (norm_read_fuzzer, raw_read_fuzzer,
// embscale_trace_fuzzer). The readers read files, so each input is written to one scratch file
// per process (in $TMPDIR, /dev/shm when there is one) and read back through the public API.
// Every input must either read completely or fail with InputError; a batch that comes back must
// satisfy Batch's invariants, follow the previous one, and add up to the shape's sample count.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/batch.hpp"
#include "core/error.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace::fuzz {

inline std::filesystem::path scratch_file(const char* tag) {
  std::filesystem::path dir = std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
  if (const char* t = std::getenv("TMPDIR")) dir = t;
  return dir / ("embscale-" + std::string(tag) + "-" + std::to_string(::getpid()));
}

inline void put_file(const std::filesystem::path& path, const std::uint8_t* data, std::size_t size) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) std::abort();
  if (size && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
}

// Puts `selector` before a seed file's bytes (the targets take their options from the first byte).
inline void prefix_byte(const std::filesystem::path& file, std::uint8_t selector) {
  std::FILE* in = std::fopen(file.c_str(), "rb");
  if (!in) std::abort();
  std::string bytes(1, static_cast<char>(selector));
  for (int c; (c = std::fgetc(in)) != EOF;) bytes.push_back(static_cast<char>(c));
  std::fclose(in);
  put_file(file, reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
}

// A seed: the batch written through the library's writer, then the selector byte put in front.
inline void finish_seed(TraceWriter& writer, const Batch& batch, const std::filesystem::path& file,
                        std::uint8_t selector) {
  writer.write(batch);
  writer.close();
  prefix_byte(file, selector);
}

// LLVMFuzzerInitialize of every trace target: with EMBSCALE_FUZZ_WRITE_SEEDS=<dir> write the seeds
// there and exit (scripts/fuzz-check runs the binary so before fuzzing).
inline int initialize(void (*write_seeds)(const std::filesystem::path&)) {
  if (const char* dir = std::getenv("EMBSCALE_FUZZ_WRITE_SEEDS")) {
    write_seeds(dir);
    std::exit(0);
  }
  return 0;
}

// Reads the trace at `path` in pieces of 1 to 8 samples; aborts on a broken invariant.
inline void read_checked(const std::filesystem::path& path, TraceFormat format, const TraceReadOptions& options,
                         unsigned piece_seed) {
  try {
    auto reader = open_trace_reader(path, format, options);
    Batch b;
    std::int64_t next = 0;
    for (unsigned i = 0;; ++i) {
      const std::int64_t want = 1 + (piece_seed + i) % 8;
      const std::int64_t got = reader->read(want, b);
      if (got == 0) break;
      if (got > want || b.first_sample != next || b.num_samples != got) std::abort();
      validate_batch(b);
      next += got;
    }
    if (next != reader->shape().num_samples) std::abort();
  } catch (const InputError&) {}
}

}  // namespace embscale::trace::fuzz
