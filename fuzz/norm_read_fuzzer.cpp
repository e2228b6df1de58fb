// libFuzzer target for the Norm reader (workloads/trace/norm_format.hpp): any bytes as a Norm data
// file must read whole or fail with InputError (never crash, read out of bounds, allocate without
// bound or hang). The first input byte picks the options: key width (given, or detected by the
// reader), max_nnz, key spaces.
//
// Seeds: EMBSCALE_FUZZ_WRITE_SEEDS=<dir> writes small valid files (both key widths, checksum on
// and off, 0 to 9 samples) through the library's writer and exits (scripts/fuzz-check).
#include <cstdint>
#include <filesystem>
#include <string>

#include "trace_fuzz.hpp"
#include "workloads/trace/trace.hpp"

namespace {

using namespace embscale::trace;

KeyWidth width_for(std::uint8_t selector) { return (selector & 1) ? KeyWidth::kI32 : KeyWidth::kI64; }

TraceReadOptions options_for(std::uint8_t selector) {
  TraceReadOptions o;
  if (!(selector & 8)) o.norm_key_width = width_for(selector);  // else detected
  o.max_nnz = (selector & 2) ? 3 : 0;
  if (selector & 4) o.slot_sizes = {10, 20, 30};
  return o;
}

void write_seeds(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int written = 0;
  for (std::uint8_t selector = 0; selector < 16; ++selector) {
    for (const bool checksum : {false, true}) {
      for (const std::int64_t n : {0, 1, 9}) {
        const TraceShape shape{1, 2, 3, {10, 20, 30}, 0};
        TraceWriteOptions wo;
        wo.key_width = width_for(selector);
        wo.norm_checksum = checksum;
        const auto file = dir / ("norm_" + std::to_string(written));
        auto writer = open_trace_writer(file, TraceFormat::kNorm, shape, wo);
        embscale::Batch b;
        b.num_samples = n;
        b.num_slots = 3;
        b.label_dim = 1;
        b.dense_dim = 2;
        for (std::int64_t s = 0; s < n; ++s) {
          b.labels.push_back(static_cast<float>(s));
          b.dense.insert(b.dense.end(), {0.5f, -1.f});
          for (int j = 0; j < 3; ++j) {
            // Slot j owns [offset_j, offset_j + size_j) of the sizes {10, 20, 30}.
            constexpr std::int64_t offset[] = {0, 10, 30};
            for (std::int64_t k = 0; k < (s + j) % 4; ++k) b.keys.push_back(offset[j] + (s + k) % 10);
            b.offsets.push_back(static_cast<std::int64_t>(b.keys.size()));
          }
        }
        fuzz::finish_seed(*writer, b, file, selector);
        ++written;
      }
    }
  }
  std::fprintf(stderr, "norm_read_fuzzer: wrote %d seeds to %s\n", written, dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::initialize(write_seeds); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const auto path = fuzz::scratch_file("norm-fuzz");
  fuzz::put_file(path, data + 1, size - 1);
  fuzz::read_checked(path, TraceFormat::kNorm, options_for(data[0]), data[0]);
  return 0;
}
