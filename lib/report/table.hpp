// A table of a run: /runs/<id>/<group>/<name>, a float64 [row, column] dataset with its column
// names, for results that are neither per rank nor one value per iteration (eviction accuracy:
// hit rate per step of the table and of each oracle; results/schema.md "Tables").
// The writer (RunRecord::tables) and the reader (ReportData::Run::tables) share this type.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace embscale::report {

struct ReportTable {
  // Names of the columns in order: at least one, none empty or containing ',' (the attribute
  // `columns` joins them with ',').
  std::vector<std::string> columns;
  // Row-major: rows() x columns.size(); its size is a multiple of columns.size().
  std::vector<double> values;
  // One line saying what a row and its values are (the attribute `meaning`); optional.
  std::string meaning;

  std::size_t rows() const noexcept { return columns.empty() ? 0 : values.size() / columns.size(); }
  double operator()(std::size_t row, std::size_t column) const { return values[row * columns.size() + column]; }
  bool operator==(const ReportTable&) const = default;
};

}  // namespace embscale::report
