// The /summary table: one row per run, one column per field, the same fields in every row of a
// report. Values are int64, double or text.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace embscale::report {

using SummaryValue = std::variant<std::int64_t, double, std::string>;

struct SummaryField {
  std::string name;
  SummaryValue value;
};

using SummaryRow = std::vector<SummaryField>;

// "1.234e+06"-free rendering for people: doubles with 4 significant digits, k/M/G suffixes for
// large magnitudes, integers in full.
std::string format_value(const SummaryValue& value);

// An aligned text table: a header of field names and one line per row. Wide tables are printed
// transposed (one line per field, one column per run), which stays readable in a terminal.
std::string format_summary_table(const std::vector<SummaryRow>& rows);

}  // namespace embscale::report
