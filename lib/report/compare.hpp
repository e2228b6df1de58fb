// Regression verdicts between two reports (embscale compare): runs are matched by their
// parameters; for each figure (step time, each phase, throughput, bytes sent) the relative change
// of the median and a one-sided Mann-Whitney test in the "worse" direction.
//
// Samples (core/statistics.hpp says why raw iterations are not used):
//   * repetitions: when both reports hold two or more runs with the same parameters, one sample
//     per run, the median of its iterations after the warm-up;
//   * block means otherwise: the single run's iterations after the warm-up, cut into `blocks`
//     contiguous blocks, one sample per block.
// A figure regresses when it is worse by more than min_change AND the test rejects "no change" at
// level alpha: a tiny significant change and a large insignificant one both pass.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/reader.hpp"

namespace embscale::report {

struct CompareOptions {
  double alpha = 0.05;            // significance level of the one-sided test
  double min_change = 0.05;       // smallest relative change that counts (0.05 = 5 %)
  std::size_t blocks = 10;        // block means per run when there are no repetitions
  double warmup_fraction = 0.1;   // leading share of iterations left out of every run
};

struct FigureComparison {
  std::string run;                // the matched runs' parameters, "name=value ..."
  std::string figure;             // step_time, phase:<name>, throughput_samples_per_s, bytes_sent
  bool higher_is_better = false;
  double base = 0;                // median of the samples
  double next = 0;
  double relative_change = 0;     // (next - base) / base
  double p_value = 1;             // one-sided test in the direction of the observed change
  std::string sampling;           // how the samples were formed
  bool regression = false;
  bool improvement = false;
};

struct Comparison {
  std::vector<FigureComparison> figures;
  std::size_t matched_runs = 0;
  double geomean_time_ratio = 1;  // geometric mean of next/base over the time figures (step, phases)
  bool any_regression = false;
};

// Throws InputError when the reports have no runs in common (naming what each holds).
Comparison compare_reports(const ReportData& base, const ReportData& next, const CompareOptions& options);

std::string format_comparison(const Comparison& comparison);
nlohmann::json comparison_to_json(const Comparison& comparison, const CompareOptions& options);

}  // namespace embscale::report
