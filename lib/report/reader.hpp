// Reading a report back, serially (no MPI needed; any process can read what a job wrote):
// root attributes, the /summary table and every run's parameters, timings, counters, series and
// tables.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/summary.hpp"
#include "report/table.hpp"

namespace embscale::report {

// A row-major [rows, cols] array: rows are iterations, columns ranks.
template <class T> struct Matrix {
  std::size_t rows = 0;
  std::size_t cols = 0;
  std::vector<T> values;  // rows * cols, row after row

  const T& operator()(std::size_t r, std::size_t c) const { return values[r * cols + c]; }
  T& operator()(std::size_t r, std::size_t c) { return values[r * cols + c]; }
};

struct ReportData {
  struct Run {
    std::string id;
    std::vector<SummaryField> parameters;               // the run group's attributes in written order,
                                                        // without the structural ones (phases, samples)
    std::vector<std::string> phase_names;               // execution order
    std::map<std::string, std::string> phase_meanings;  // phase -> what it covers (may be empty)
    std::string samples;                                // "raw": every iteration is stored
    std::optional<std::int64_t> point;                  // sweeps: the point's index
    std::optional<std::int64_t> repetition;             // sweeps: the repetition of the point
    std::string sharding_plan;                          // the plan's JSON (runs of planned configs); else empty
    std::string transport;                              // a parameter-server run's message transport; else empty
    // Merged reports: the root attributes of the report the run was written to (its config,
    // job, hosts, time); empty in a report a run wrote itself (the root attributes hold them).
    std::map<std::string, SummaryValue> metadata;
    std::map<std::string, Matrix<double>> timings;         // phase -> [iteration, rank] s
    std::map<std::string, Matrix<std::int64_t>> counters;  // name -> [iteration, rank]
    std::map<std::string, std::vector<double>> series;     // name -> [iteration]
    // "<group>/<name>" -> the 2-D float dataset /runs/<id>/<group>/<name> of every group of the
    // run but the reserved ones (is_reserved_run_group); columns "column 0", "column 1", ...
    // when the dataset has no `columns` attribute.
    std::map<std::string, ReportTable> tables;
  };
  std::map<std::string, SummaryValue> attributes;  // root attributes (RunMetadata)
  std::vector<SummaryRow> summary;                 // /summary, a row per run (empty if absent)
  std::vector<Run> runs;                           // in written order

  // The root attribute report_kind (report/report_kind.hpp): "run" when absent, "collectives",
  // or whatever a newer embscale wrote (read_report has checked that it is text).
  std::string kind() const;

  const Run* find_run(std::string_view id) const noexcept {
    for (const auto& run : runs)
      if (run.id == id) return &run;
    return nullptr;
  }
};

// Throws InputError naming the file: when it is missing, not HDF5, not an embscale report, of
// another schema version ("<file>: report schema version 7, this embscale reads version 1"),
// when its report_kind attribute is not text, or when a part of it does not have the schema's
// shape or cannot be read (a table that is no 2-D float dataset, or whose `columns` attribute
// names another number of columns, among them). Any kind is read: the tools that read one kind
// only refuse the others (report/report_kind.hpp).
// Attributes of other types than integer, float and string (arrays, say, added by hand) are
// read as a text saying what they are; integers come back as int64, floats as double.
ReportData read_report(const std::filesystem::path& path);

}  // namespace embscale::report
