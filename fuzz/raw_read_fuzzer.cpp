// libFuzzer target for the Raw reader (workloads/trace/raw_format.hpp): any bytes as a Raw file
// must read whole or fail with InputError. The first input byte picks the shape (label and dense
// dims, slot sizes) and float_label_dense; the rest is the file.
//
// Seeds: EMBSCALE_FUZZ_WRITE_SEEDS=<dir> writes small valid files through the library's writer.
#include <cstdint>
#include <filesystem>
#include <string>

#include "trace_fuzz.hpp"
#include "workloads/trace/trace.hpp"

namespace {

using namespace embscale::trace;

TraceReadOptions options_for(std::uint8_t selector) {
  TraceReadOptions o;
  o.label_dim = selector & 1;
  o.dense_dim = (selector >> 1) & 3;
  o.slot_sizes = (selector & 8) ? std::vector<std::int64_t>{3, 1, 1000} : std::vector<std::int64_t>{1 << 30};
  o.raw_float_label_dense = (selector & 16) != 0;
  return o;
}

void write_seeds(const std::filesystem::path& dir) {
  std::filesystem::create_directories(dir);
  int written = 0;
  for (std::uint8_t selector = 0; selector < 32; ++selector) {
    const TraceReadOptions o = options_for(selector);
    const TraceShape shape{*o.label_dim, *o.dense_dim, static_cast<std::int32_t>(o.slot_sizes.size()), o.slot_sizes, 0};
    TraceWriteOptions wo;
    wo.raw_float_label_dense = o.raw_float_label_dense;
    const auto file = dir / ("raw_" + std::to_string(written));
    auto writer = open_trace_writer(file, TraceFormat::kRaw, shape, wo);
    embscale::Batch b;
    b.num_samples = 5;
    b.num_slots = shape.num_slots;
    b.label_dim = shape.label_dim;
    b.dense_dim = shape.dense_dim;
    const auto offsets = slot_offsets(shape.slot_sizes);
    for (int s = 0; s < 5; ++s) {
      for (int l = 0; l < shape.label_dim; ++l) b.labels.push_back(static_cast<float>(s % 2));
      for (int d = 0; d < shape.dense_dim; ++d) b.dense.push_back(0.f);
      for (std::size_t j = 0; j < offsets.size(); ++j) {
        b.keys.push_back(offsets[j] + s % shape.slot_sizes[j]);
        b.offsets.push_back(static_cast<std::int64_t>(b.keys.size()));
      }
    }
    fuzz::finish_seed(*writer, b, file, selector);
    ++written;
  }
  std::fprintf(stderr, "raw_read_fuzzer: wrote %d seeds to %s\n", written, dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) { return fuzz::initialize(write_seeds); }

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  static const auto path = fuzz::scratch_file("raw-fuzz");
  fuzz::put_file(path, data + 1, size - 1);
  fuzz::read_checked(path, TraceFormat::kRaw, options_for(data[0]), data[0]);
  return 0;
}
