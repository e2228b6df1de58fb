// Regression verdicts between two reports (embscale compare): runs are paired by their parameters
// (report/run_pairing.hpp); for each figure (step time, throughput where runs have a batch, each
// phase, bytes sent, other series) the relative change of the median and a one-sided Mann-Whitney
// test in the "worse" direction (report/figure_direction.hpp declares which way each figure
// improves: times down, throughput and bandwidth up). Both reports are of one kind
// (report/report_kind.hpp: embscale compare checks it); a collectives report's step_time is one
// call of the collective.
//
// Samples (core/statistics.hpp says why raw iterations are not used):
//   * repetitions: when both sides of a pair hold two or more runs, one sample per run, the
//     median of its iterations after the warm-up;
//   * block means otherwise: the single run's iterations after the warm-up, cut into `blocks`
//     contiguous blocks, one sample per block.
//
// The verdict (what CI gates on) must not cry wolf, so three rules hold together:
//   1. Only the gated figures can fail it: by default what a CI user means by "slower", the step
//      time and the throughput (and a benchmark file's real_time). Phases and bytes are printed
//      with their own p-values and gate only when asked (--gate phases,bytes or --gate all):
//      a run has many phases, and a sub-millisecond one moves by tens of percent between
//      identical runs.
//   2. Holm's correction over every gated hypothesis of every paired run (the step time and the
//      throughput of a pair are one: the same iterations seen two ways): the chance that the
//      tests reject a true "no change" is at most alpha however many are made. With single runs
//      a test sees only the noise inside each run, not between runs; rule 3 and the measured
//      rates (scripts/compare-error-rates) cover that.
//   3. A gated figure regresses only when it is also worse by more than min_change; a gated phase
//      only when its added time is more than min_change of the base step time (the floor: a phase
//      too small to move the step cannot fail the gate on its own).
//
// Model quality (runs with an evaluation, lib/run/evaluation.hpp) is one more gated figure,
// eval_auc: the last evaluation's AUC, one value per run, higher is better. Its samples differ
// from the times': a run of one seed is deterministic (the same config gives the same AUC), so
//   * with repetitions whose AUCs differ (runs of other seeds), the test is Mann-Whitney over the
//     runs' AUCs, as for times;
//   * otherwise (single runs, or repetitions of one seed), a z-test of the difference over the two
//     AUCs' DeLong standard errors (model/auc.hpp: the spread over other held-out samples;
//     conservative when both sides scored the same samples).
// Its size rule is absolute, in AUC points (min_auc_change), since a point of AUC means the same at
// 0.70 and at 0.95. Measured rates: README "Comparing runs", scripts/compare-error-rates --quality.
//
// A run with dynamic tables has one more gated figure, hit_rate: per iteration, the reads its
// tables found over all their reads (the counters hits and misses, every rank and layer summed),
// higher is better. With repetitions its samples are the runs' medians (Mann-Whitney, as for
// times); with single runs, the two runs' block means paired block by block (the same
// iterations: a warming table's rising hit rate is shared, and Mann-Whitney over the blocks would
// count that trend as noise) under an exact sign test. Its size rule is absolute too, in points of
// hit rate (min_hit_rate_change). A run of one seed reads the same keys whatever the machine, so
// two runs of one seed have one hit rate: the noise that matters is the data's, between seeds
// (measured rates: README "Comparing runs", scripts/compare-error-rates --hit-rate).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/reader.hpp"

namespace embscale::report {

// --min-change's defaults. With repetitions the test sees the run-to-run variation and 5 % is
// simply the smallest slowdown worth a failed CI run (interleaved, 5 a side: 0 of 20 identical
// pairs flagged, 20 of 20 slowed by 25 %; scripts/compare-error-rates, README "Comparing runs").
// With one run a side the test sees only the noise inside each run, and identical runs on the
// 2-core development VM differed by up to 11 % in a quiet hour (10 % flagged 0 of 20 identical
// pairs) and 23 % in a noisy one (6 of 20): 10 % is a compromise, and the README says to gate on
// repetitions.
inline constexpr double kMinChangeRepetitions = 0.05;
inline constexpr double kMinChangeSingleRuns = 0.10;
// --min-auc-change's default, in AUC points: half a point. Measured (scripts/compare-error-rates
// --quality, bench/configs/ctr_planted_small.json, every run its own seed): with 5 repetitions a
// side 0 of 20 pairs flagged (1 of 20 at 0), 12 of 20 runs with the learning rate halved (-0.007
// AUC) and 20 of 20 quartered (-0.031) caught; with single runs 12 of 100 flagged: the held-out
// error does not see the seed's training noise (README "Comparing runs").
inline constexpr double kMinAucChange = 0.005;
// --min-hit-rate-change's default, in points of hit rate (hits / reads of the dynamic tables).
// Measured: README "Comparing runs", scripts/compare-error-rates --hit-rate.
inline constexpr double kMinHitRateChange = 0.005;

// Families of figures that --gate names.
struct GateSelection {
  bool step = true;      // step_time, throughput_samples_per_s; real_time of benchmark files
  bool phases = false;   // phase:<name>
  bool bytes = false;    // bytes_sent
  bool other = false;    // any other series (cpu_time of benchmark files)
  bool quality = true;   // eval_auc: the last evaluation's AUC (runs with an evaluation)
  bool hit_rate = true;  // hit_rate: the dynamic tables' hits over reads per iteration (runs with one)
};

// Parses "step,phases,quality" / "all" / "none"; throws InputError naming --gate and the choices.
GateSelection parse_gate_selection(const std::vector<std::string>& names);
std::string describe(const GateSelection& gate);
std::string describe_as_names(const GateSelection& gate);  // "step,quality" for the default: --gate's words

struct CompareOptions {
  double alpha = 0.05;  // family-wise significance level over the gated figures
  // Smallest relative change that counts. Unset: kMinChangeRepetitions with repetitions,
  // kMinChangeSingleRuns with single runs, whose tests cannot see run-to-run shifts.
  std::optional<double> min_change;
  double min_auc_change = kMinAucChange;           // eval_auc's size rule: a drop of more AUC points than this
  double min_hit_rate_change = kMinHitRateChange;  // hit_rate's: a drop of more points than this
  std::size_t blocks = 10;                         // block means per run when there are no repetitions
  double warmup_fraction = 0.1;                    // leading share of iterations left out of every run
  GateSelection gate;
  std::vector<std::string> ignored_parameters;  // paired as equal whatever their values (--ignore)
};

struct FigureComparison {
  std::string run;     // the pair's parameters, "name=value ..." (ignored: "name=base->new")
  std::string figure;  // step_time, throughput_samples_per_s, phase:<name>, bytes_sent, eval_auc
  bool higher_is_better = false;
  bool gated = false;  // in the family the verdict is drawn from
  double base = 0;     // median of the samples
  double next = 0;
  double relative_change = 0;  // (next - base) / base
  bool absolute = false;       // a quality figure: min_change is in the figure's own units (AUC points)
  double p_value = 1;          // one-sided test in the direction of the observed change
  double p_worse = 1;          // one-sided test in the "worse" direction (what Holm adjusts)
  double p_holm = 1;           // Holm-adjusted p_worse (gated figures; 1 otherwise)
  double smallest_p = 0;       // the smallest p-value the test can give these sample sizes
  bool below_floor = false;    // a phase whose change is too small a share of the step to gate
  std::string sampling;        // how the samples were formed
  std::string missing_on;      // "base" or "new" when a side lacks the figure (then not tested)
  double min_change = 0;       // the size threshold applied (CompareOptions::min_change or its default)
  double base_spread = 0;      // each side's own spread: the interquartile range of its samples over
  double next_spread = 0;      // their median (0 with fewer than two samples)
  bool regression = false;     // gated, Holm-significant, worse by more than min_change (and the floor)
  bool slower = false;         // not gated, but would be a regression were it tested alone
  bool improvement = false;    // better by more than min_change, significant alone
};

struct Comparison {
  std::vector<FigureComparison> figures;
  std::size_t matched_runs = 0;
  std::size_t unpaired_base = 0;  // runs without a partner on the other side (not compared)
  std::size_t unpaired_next = 0;
  std::size_t gated_tests = 0;  // the size of Holm's family
  // Geometric mean over the paired runs of new/base of the median step time (benchmark files:
  // real_time). 1.0 when no pair has one.
  double step_time_ratio_geomean = 1;
  std::size_t step_time_ratios = 0;
  std::size_t paired_base_runs = 0;  // runs (repetitions) in the pairs of each side
  std::size_t paired_next_runs = 0;
  bool any_regression = false;
  // What the verdict cannot see: gated figures missing on a side, gated tests whose sample sizes
  // cannot reach significance after Holm (too few repetitions).
  std::vector<std::string> warnings;
};

// Throws InputError when the reports have no runs in common, naming the parameters that differ
// between the closest runs of the two sides (and --ignore as the way to pair them anyway), and
// when no gated figure is in both reports (a gate that tests nothing).
Comparison compare_reports(const ReportData& base, const ReportData& next, const CompareOptions& options);

std::string format_comparison(const Comparison& comparison, const CompareOptions& options);
nlohmann::json comparison_to_json(const Comparison& comparison, const CompareOptions& options);

}  // namespace embscale::report
