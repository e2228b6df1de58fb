#include "report/repetition_spread.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>

#include "core/statistics.hpp"
#include "report/figure_units.hpp"

namespace embscale::report {
namespace {

constexpr const char* kFigures[] = {"step_time_median_s", "throughput_samples_per_s"};

std::string text_of(const SummaryValue& value) { return format_value(value); }

// The parameters whose value differs between some runs: what names a point.
std::vector<std::string> varying_parameters(const ReportData& data) {
  std::map<std::string, std::string> first;
  std::vector<std::string> varying;
  for (const auto& run : data.runs)
    for (const auto& p : run.parameters) {
      const auto [it, added] = first.try_emplace(p.name, text_of(p.value));
      if (!added && it->second != text_of(p.value) &&
          std::find(varying.begin(), varying.end(), p.name) == varying.end())
        varying.push_back(p.name);
    }
  return varying;
}

std::optional<double> summary_value(const ReportData& data, const std::string& run_id, const std::string& figure) {
  for (const auto& row : data.summary) {
    const auto id = std::find_if(row.begin(), row.end(), [](const SummaryField& f) { return f.name == "run_id"; });
    if (id == row.end() || text_of(id->value) != run_id) continue;
    for (const auto& field : row)
      if (field.name == figure)
        if (const auto* number = std::get_if<double>(&field.value)) return *number;
  }
  return std::nullopt;
}

RepetitionSpread spread_of(std::string point, std::string figure, std::vector<double> values) {
  RepetitionSpread s{std::move(point), std::move(figure), values.size()};
  const std::size_t n = values.size();
  s.median = median(values);
  for (const double v : values) s.mean += v / static_cast<double>(n);
  double squares = 0;
  for (const double v : values) squares += (v - s.mean) * (v - s.mean);
  s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
  s.cv = s.mean != 0 ? s.stddev / std::fabs(s.mean) : 0.0;
  return s;
}

}  // namespace

std::vector<RepetitionSpread> repetition_spread(const ReportData& data) {
  std::vector<std::pair<std::vector<SummaryField>, std::vector<std::string>>> points;  // parameters, run ids
  for (const auto& run : data.runs) {
    auto it = std::find_if(points.begin(), points.end(), [&](const auto& p) { return p.first == run.parameters; });
    if (it == points.end()) it = points.insert(points.end(), {run.parameters, {}});
    it->second.push_back(run.id);
  }
  const auto varying = varying_parameters(data);
  std::vector<RepetitionSpread> out;
  for (const auto& [parameters, ids] : points) {
    if (ids.size() < 2) continue;
    std::string point;
    for (const auto& p : parameters)
      if (std::find(varying.begin(), varying.end(), p.name) != varying.end())
        point += (point.empty() ? "" : " ") + p.name + "=" + text_of(p.value);
    for (const char* figure : kFigures) {
      std::vector<double> values;
      for (const auto& id : ids)
        if (const auto value = summary_value(data, id, figure)) values.push_back(*value);
      if (values.size() >= 2) out.push_back(spread_of(point.empty() ? "(every run)" : point, figure, values));
    }
  }
  return out;
}

std::string format_repetition_spread(const std::vector<RepetitionSpread>& spreads) {
  if (spreads.empty()) return "";
  std::size_t width = 5;
  for (const auto& s : spreads) width = std::max(width, s.point.size());
  std::string text = "repetitions (runs with equal parameters): each run's value, over the runs\n";
  char line[1024];
  std::snprintf(line, sizeof line, "  %-*s  %-24s %4s %18s %18s %18s %7s\n", static_cast<int>(width), "point", "figure",
                "runs", "median", "mean", "stddev", "CV");
  text += line;
  for (const auto& s : spreads) {
    std::snprintf(line, sizeof line, "  %-*s  %-24s %4zu %18s %18s %18s %6.1f%%\n", static_cast<int>(width),
                  s.point.c_str(), s.figure.c_str(), s.runs, format_figure_value(s.figure, s.median).c_str(),
                  format_figure_value(s.figure, s.mean).c_str(), format_figure_value(s.figure, s.stddev).c_str(),
                  100.0 * s.cv);
    text += line;
  }
  return text;
}

}  // namespace embscale::report
