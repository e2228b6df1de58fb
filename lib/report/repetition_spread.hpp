// The spread of repeated runs: runs of one report with equal parameters are repetitions of one
// point (a sweep's `repetitions`, or runs merged), and a reader judging a figure needs to see how
// much it moves between them, as Google Benchmark prints the mean, median, stddev and CV of its
// repetitions. `embscale report` and `sweep` print it under the summary table.
#pragma once

#include <string>
#include <vector>

#include "report/reader.hpp"

namespace embscale::report {

// One point's repetitions of one figure (each run's /summary value).
struct RepetitionSpread {
  std::string point;   // the parameters that tell the report's points apart, "name=value ..."
  std::string figure;  // a /summary column: step_time_median_s, throughput_samples_per_s
  std::size_t runs = 0;
  double median = 0, mean = 0;
  double stddev = 0;  // sample standard deviation (n - 1)
  double cv = 0;      // stddev / mean
};

// Per point with two or more runs, in first-seen order, the step time and throughput spread.
std::vector<RepetitionSpread> repetition_spread(const ReportData& data);

// The spreads as a text table ("" when no point is repeated).
std::string format_repetition_spread(const std::vector<RepetitionSpread>& spreads);

}  // namespace embscale::report
