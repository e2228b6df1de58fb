// Which way each figure of a report improves: the one declaration every reader of figures uses
// (embscale compare's "worse" test and its "improved", the plots' labels). Times, phases and
// bytes improve downward; throughput, bandwidth and rates (hit rates, AUC) upward. A figure is
// named as compare names it: step_time, throughput_samples_per_s, phase:<name>, bytes_sent, or a
// series (results/schema.md: <phase>.algbw and <phase>.busbw of a run report, mpi_time of a
// collectives report, real_time and cpu_time of a Google Benchmark file).
//
// A new kind of figure whose direction is not "lower" gets its row in kHigherIsBetter
// (figure_direction.cpp); the test there holds every figure embscale writes to its direction.
#pragma once

#include <string_view>

namespace embscale::report {

enum class Better { kLower, kHigher };

Better better_direction(std::string_view figure) noexcept;

// Whether `figure` is `part` or ends with it after a '.' or '_' ("exchange_keys.algbw" names
// algbw, "emb1.hit_rate" hit_rate): how a figure of a phase or layer is matched by its kind, here
// and in figure_units.
bool names_figure(std::string_view figure, std::string_view part) noexcept;
inline bool higher_is_better(std::string_view figure) noexcept { return better_direction(figure) == Better::kHigher; }

}  // namespace embscale::report
