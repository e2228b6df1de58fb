// Reading a report back (serially; no MPI needed): root attributes, the /summary table and
// every run's parameters, timings, counters and series.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "report/summary.hpp"

namespace embscale::report {

// A row-major [rows, cols] array: rows are iterations, columns ranks.
template <class T>
struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<T> values;
  const T& operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
};

struct ReportData {
  struct Run {
    std::string id;
    std::vector<SummaryField> parameters;  // the group's attributes, in name order
    std::map<std::string, Matrix<double>> timings;
    std::map<std::string, Matrix<std::int64_t>> counters;
    std::map<std::string, std::vector<double>> series;
  };
  std::map<std::string, SummaryValue> attributes;
  std::vector<SummaryRow> summary;
  std::vector<Run> runs;
};

// Throws InputError naming the file when it is missing, not HDF5, or of another schema version.
ReportData read_report(const std::filesystem::path& path);

}  // namespace embscale::report
