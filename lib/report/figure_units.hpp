// The unit each figure of a report is shown in, declared once beside its direction
// (figure_direction.hpp) and named the same way: a time (step_time, phase:<name>, mpi_time, a
// benchmark's real_time and cpu_time, the summary's step_time_median_s and step_time_p95_s; stored
// in seconds) is shown in ms, bandwidths (<phase>.algbw,
// .busbw; stored in bytes/s) in GB/s, throughput in samples/s or keys/s, bytes with SI prefixes; a
// rate, ratio or loss has no unit.
#pragma once

#include <string>
#include <string_view>

namespace embscale::report {

// `value` (as the report stores it) in the figure's display unit: "2.831 ms", "11.2 GB/s",
// "1.45 M samples/s", "3.2 MB", "0.8123"; "n/a" for NaN (a figure not measured).
std::string format_figure_value(std::string_view figure, double value);
// The display unit alone ("ms", "GB/s", ...; "" for none).
std::string figure_unit(std::string_view figure);

}  // namespace embscale::report
