// libFuzzer target for Norm file lists (workloads/trace/norm_file_list.hpp) and the way a Norm
// trace is opened from one (a first line that is a count, a text without one): any bytes as the
// file a config's Norm "source" names must open (the files it lists read whole) or fail with
// InputError; never crash, another exception or a hang.
//
// Seeds: lists of the seeds' data files written by scripts/fuzz-check (a count and paths of files
// under the seed directory, a list that miscounts, a list with an empty line).
#include <cstdint>

#include "trace_fuzz.hpp"
#include "workloads/trace/norm_file_list.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto path = embscale::trace::fuzz::scratch_file("norm-list-fuzz");
  embscale::trace::fuzz::put_file(path, data, size);
  try {
    (void)embscale::trace::read_norm_file_list(path);
  } catch (const embscale::InputError&) {}
  embscale::trace::fuzz::read_checked(path, embscale::trace::TraceFormat::kNorm, {}, 0);
  return 0;
}
