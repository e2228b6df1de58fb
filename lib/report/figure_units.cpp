#include "report/figure_units.hpp"

#include <cmath>
#include <cstdio>

namespace embscale::report {
namespace {

bool ends_with_part(std::string_view figure, std::string_view part) noexcept {
  if (figure == part) return true;
  if (figure.size() <= part.size() || !figure.ends_with(part)) return false;
  const char before = figure[figure.size() - part.size() - 1];
  return before == '.' || before == '_';
}

enum class Kind { kTime, kBandwidth, kPerSecond, kBytes, kNone };

struct Unit {
  Kind kind;
  std::string_view name;  // for kPerSecond and kBytes: what is counted ("samples/s", "B")
};

Unit unit_of(std::string_view figure) noexcept {
  // step_time_median_s and step_time_p95_s: the summary's step times (seconds, as stored).
  const bool summary_step = figure == "step_time_median_s" || figure == "step_time_p95_s";
  if (figure.starts_with("phase:") || figure == "step_time" || summary_step || ends_with_part(figure, "mpi_time") ||
      ends_with_part(figure, "real_time") || ends_with_part(figure, "cpu_time"))
    return {Kind::kTime, "ms"};
  if (ends_with_part(figure, "algbw") || ends_with_part(figure, "busbw")) return {Kind::kBandwidth, "GB/s"};
  if (figure == "throughput_samples_per_s") return {Kind::kPerSecond, "samples/s"};
  if (figure == "throughput_keys_per_s") return {Kind::kPerSecond, "keys/s"};
  if (ends_with_part(figure, "items_per_second")) return {Kind::kPerSecond, "items/s"};
  if (ends_with_part(figure, "bytes_per_second")) return {Kind::kPerSecond, "B/s"};
  if (figure == "bytes_sent_per_step" || ends_with_part(figure, "bytes_sent") || ends_with_part(figure, "bytes_recv"))
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
