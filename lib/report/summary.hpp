// The /summary table: one row per run, one column per field, so that a sweep reads as one table
// (pandas: one call). Values are int64, double or text; the producer defines the fields
// (results/schema.md lists the ones `embscale run` writes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace embscale::report {

using SummaryValue = std::variant<std::int64_t, double, std::string>;

struct SummaryField {
  std::string name;
  SummaryValue value;
  bool operator==(const SummaryField&) const = default;
};

using SummaryRow = std::vector<SummaryField>;

// One value for people: integers in full; doubles with 4 significant digits, and from 10^4 on
// with an SI suffix (12.35k, 5.974M, 2.5G, 1.2T, 3P) instead of an exponent; NaN, a figure not
// measured, as "n/a"; text as it is.
std::string format_value(const SummaryValue& value);

// An aligned text table with a header line of field names, one column per field and one line
// per run; numeric columns are right-aligned, text columns left-aligned. Columns are the fields
// of all rows in order of first appearance; a row without a field shows "-".
// A table wider than `max_width` characters is printed transposed instead (one line per field,
// one column per run), which stays readable in a terminal when a run has many fields;
// max_width = 0 never transposes. No trailing blanks; "(no runs)\n" when there are no rows.
std::string format_summary_table(const std::vector<SummaryRow>& rows, std::size_t max_width = 120);

}  // namespace embscale::report
