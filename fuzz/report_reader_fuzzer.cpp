// libFuzzer target for the report reader (report/reader.hpp): any bytes as a report file must read
// into ReportData or fail with InputError; never crash, throw anything else or hang. The bytes go
// through HDF5's own parser first, so a finding may be HDF5's (a corrupt file it cannot refuse
// cleanly): the campaign's record says which.
//
// Seeds: small reports written by embscale (scripts/fuzz-check runs a 2-rank run and a sweep).
#include <cstdint>

#include "core/error.hpp"
#include "report/reader.hpp"
#include "trace_fuzz.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto path = embscale::trace::fuzz::scratch_file("report-fuzz");
  embscale::trace::fuzz::put_file(path, data, size);
  try {
    (void)embscale::report::read_report(path);
  } catch (const embscale::InputError&) {}
  return 0;
}
