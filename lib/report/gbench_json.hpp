// Google Benchmark's JSON output (--benchmark_out=F --benchmark_out_format=json) read as a report,
// so that `embscale compare` judges micro-benchmarks with the same statistics as runs: one run per
// repetition of a benchmark, its parameters the benchmark's name (so repetitions group), its
// series real_time and cpu_time in seconds. Aggregate rows (mean, median, stddev, cv) are
// skipped: the test needs the repetitions themselves. Its report_kind is "google_benchmark", so
// that compare refuses to judge it against an HDF5 report by name.
#pragma once

#include <filesystem>

#include "report/reader.hpp"

namespace embscale::report {

// Throws InputError naming the file for unreadable or invalid JSON, or no "benchmarks" array.
ReportData read_google_benchmark_json(const std::filesystem::path& path);

// A report (HDF5) or Google Benchmark JSON, told apart by the extension ".json".
ReportData read_comparable(const std::filesystem::path& path);

}  // namespace embscale::report
