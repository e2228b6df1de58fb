#include "report/summary.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>

#include "report/figure_units.hpp"

namespace embscale::report {
namespace {

std::string printf_g(double x) {
  char text[48];
  std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

std::string format_double(double x) {
  if (std::isnan(x)) return "n/a";  // a figure not measured (NaN in the report)
  if (std::isinf(x)) return x > 0 ? "inf" : "-inf";
  // Pick the suffix from the value as rounded to 4 significant digits, so that 9999.7 becomes
  // "10k" and 999960 "1M" rather than "1e+04" or "1000k".
  char rounded_text[48];
  std::snprintf(rounded_text, sizeof rounded_text, "%.3e", std::abs(x));
  const double rounded = std::strtod(rounded_text, nullptr);
  constexpr std::array<char, 5> kSuffix{'k', 'M', 'G', 'T', 'P'};
  if (rounded < 1e4) return printf_g(x);
  double scale = 1e3;
  for (const char suffix : kSuffix) {
    if (rounded < scale * 1e3) return printf_g(x / scale) + suffix;
    scale *= 1e3;
  }
  char text[48];  // beyond 10^18 an exponent says it better
  std::snprintf(text, sizeof text, "%.3e", x);
  return text;
}

struct Column {
  std::string name;
  std::size_t width = 0;
  bool numeric = true;
};

std::string pad(const std::string& text, std::size_t width, bool right) {
  const std::string fill(width > text.size() ? width - text.size() : 0, ' ');
  return right ? fill + text : text + fill;
}

void end_line(std::string& line, std::string& out) {
  while (!line.empty() && line.back() == ' ') line.pop_back();
  out += line;
  out += '\n';
  line.clear();
}

}  // namespace

std::string format_value(const SummaryValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  return format_double(std::get<double>(value));
}

std::string format_summary_table(const std::vector<SummaryRow>& rows, std::size_t max_width) {
  if (rows.empty()) return "(no runs)\n";
  std::vector<Column> columns;
  std::map<std::string, std::size_t> column_of;
  // cells[row][column]: the formatted value, absent when the row lacks the field.
  std::vector<std::vector<std::optional<std::string>>> cells(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const auto& field : rows[r]) {
      const auto [it, added] = column_of.try_emplace(field.name, columns.size());
      if (added) columns.push_back({field.name, field.name.size(), true});
      Column& column = columns[it->second];
      auto& row_cells = cells[r];
      if (row_cells.size() <= it->second) row_cells.resize(it->second + 1);
      // A figure with a unit (times, throughput, bytes: report/figure_units.hpp) is shown in it.
      const auto* number = std::get_if<double>(&field.value);
      row_cells[it->second] = number && !figure_unit(field.name).empty() ? format_figure_value(field.name, *number)
                                                                         : format_value(field.value);
      column.width = std::max(column.width, row_cells[it->second]->size());
      column.numeric = column.numeric && !std::holds_alternative<std::string>(field.value);
    }
  const auto cell = [&](std::size_t r, std::size_t c) {
    return c < cells[r].size() && cells[r][c] ? *cells[r][c] : std::string("-");
  };

  std::size_t width = 0;
  for (const auto& column : columns) width += column.width + 2;
  std::string out, line;
  if (max_width == 0 || width - 2 <= max_width) {
    for (const auto& column : columns) line += pad(column.name, column.width, column.numeric) + "  ";
    end_line(line, out);
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (std::size_t c = 0; c < columns.size(); ++c)
        line += pad(cell(r, c), columns[c].width, columns[c].numeric) + "  ";
      end_line(line, out);
    }
    return out;
  }
  // Transposed: the field name, then every run's value right-aligned in the run's column.
  std::size_t name_width = 0;
  for (const auto& column : columns) name_width = std::max(name_width, column.name.size());
  std::vector<std::size_t> run_width(rows.size(), 0);
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < columns.size(); ++c) run_width[r] = std::max(run_width[r], cell(r, c).size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    line += pad(columns[c].name, name_width, false);
    for (std::size_t r = 0; r < rows.size(); ++r) line += "  " + pad(cell(r, c), run_width[r], true);
    end_line(line, out);
  }
  return out;
}

}  // namespace embscale::report
