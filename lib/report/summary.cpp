#include "report/summary.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace embscale::report {

std::string format_value(const SummaryValue& value) {
  if (const auto* i = std::get_if<std::int64_t>(&value)) return std::to_string(*i);
  if (const auto* s = std::get_if<std::string>(&value)) return *s;
  const double x = std::get<double>(value);
  const double a = std::abs(x);
  char text[64];
  if (a >= 1e12 || !std::isfinite(x)) std::snprintf(text, sizeof text, "%.4g", x);
  else if (a >= 1e9) std::snprintf(text, sizeof text, "%.4gG", x / 1e9);
  else if (a >= 1e6) std::snprintf(text, sizeof text, "%.4gM", x / 1e6);
  else if (a >= 1e4) std::snprintf(text, sizeof text, "%.4gk", x / 1e3);
  else std::snprintf(text, sizeof text, "%.4g", x);
  return text;
}

std::string format_summary_table(const std::vector<SummaryRow>& rows) {
  if (rows.empty()) return "(no runs)\n";
  // Transposed: field name, then the value of each run.
  const auto& fields = rows.front();
  std::size_t name_width = 0;
  for (const auto& f : fields) name_width = std::max(name_width, f.name.size());
  std::vector<std::size_t> widths(rows.size(), 0);
  std::vector<std::vector<std::string>> cells(rows.size());
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (const auto& f : rows[r]) {
      cells[r].push_back(format_value(f.value));
      widths[r] = std::max(widths[r], cells[r].back().size());
    }
  std::string out;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    std::string line = fields[i].name + std::string(name_width - fields[i].name.size() + 2, ' ');
    for (std::size_t r = 0; r < rows.size(); ++r) {
      const std::string& cell = i < cells[r].size() ? cells[r][i] : std::string("-");
      line += std::string(widths[r] > cell.size() ? widths[r] - cell.size() : 0, ' ') + cell + "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

}  // namespace embscale::report
