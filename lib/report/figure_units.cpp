#include "report/figure_units.hpp"

#include <cmath>
#include <cstdio>

#include "report/figure_direction.hpp"

namespace embscale::report {
namespace {

enum class Kind { kTime, kBandwidth, kPerSecond, kBytes, kNone };

struct Unit {
  Kind kind;
  std::string_view name;  // for kPerSecond and kBytes: what is counted ("samples/s", "B")
};

Unit unit_of(std::string_view figure) noexcept {
  // step_time_median_s and step_time_p95_s: the summary's step times (seconds, as stored).
  // dump_stall_s, checkpoint_s: what solver.incremental_dump's dumps stalled training and the
  // checkpoints took, summed (seconds).
  const bool summary_step = figure == "step_time_median_s" || figure == "step_time_p95_s" || figure == "dump_stall_s" ||
                            figure == "checkpoint_s";
  if (figure.starts_with("phase:") || figure == "step_time" || summary_step || names_figure(figure, "mpi_time") ||
      names_figure(figure, "real_time") || names_figure(figure, "cpu_time"))
    return {Kind::kTime, "ms"};
  if (names_figure(figure, "algbw") || names_figure(figure, "busbw")) return {Kind::kBandwidth, "GB/s"};
  if (figure == "throughput_samples_per_s") return {Kind::kPerSecond, "samples/s"};
  if (figure == "throughput_keys_per_s") return {Kind::kPerSecond, "keys/s"};
  if (names_figure(figure, "items_per_second")) return {Kind::kPerSecond, "items/s"};
  if (names_figure(figure, "bytes_per_second")) return {Kind::kPerSecond, "B/s"};
  if (figure == "bytes_sent_per_step" || names_figure(figure, "bytes_sent") || names_figure(figure, "bytes_recv"))
    return {Kind::kBytes, "B"};
  return {Kind::kNone, ""};
}

std::string printed(const char* format, double value, std::string_view unit) {
  char text[64];
  std::snprintf(text, sizeof text, format, value);
  return unit.empty() ? text : std::string(text) + " " + std::string(unit);
}

// 1234567 -> "1.235 M samples/s", 3200000 -> "3.2 MB": SI prefixes up to T, plain below 1000.
std::string with_si_prefix(double value, std::string_view unit) {
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T"};
  int prefix = 0;
  while (std::fabs(value) >= 1000.0 && prefix < 4) {
    value /= 1000.0;
    ++prefix;
  }
  // "MB", "kB/s"; a counted thing keeps its word apart: "M samples/s".
  const std::string joint = unit.starts_with("B") || prefix == 0 ? "" : " ";
  return printed("%.4g", value, std::string(kPrefixes[prefix]) + joint + std::string(unit));
}

}  // namespace

std::string figure_unit(std::string_view figure) { return std::string(unit_of(figure).name); }

std::string format_figure_value(std::string_view figure, double value) {
  if (std::isnan(value)) return "n/a";
  const Unit unit = unit_of(figure);
  switch (unit.kind) {
    case Kind::kTime: return printed("%.4g", value * 1e3, unit.name);
    case Kind::kBandwidth: return printed("%.4g", value / 1e9, unit.name);
    case Kind::kPerSecond:
    case Kind::kBytes: return with_si_prefix(value, unit.name);
    case Kind::kNone: break;
  }
  return printed("%.4g", value, "");
}

}  // namespace embscale::report
