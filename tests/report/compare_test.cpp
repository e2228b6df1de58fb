#include "report/compare.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "collectives_case.hpp"
#include "core/error.hpp"
#include "core/rng.hpp"

namespace embscale::report {
namespace {

// A run whose step time per iteration is `level` times (1 + noise * u), u uniform in [0, 1), on
// 2 ranks; the phase "lookup" carries `lookup_share` of it and "route" the rest; deterministic
// for a seed.
struct RunShape {
  double level = 1.0;
  double noise = 0.05;
  double lookup_share = 0.9;
  double lookup_extra = 0.0;  // seconds added to the lookup phase (and the step) per iteration
  std::int64_t ranks = 2;
};

ReportData::Run synthetic_run(const std::string& id, std::uint64_t seed, RunShape shape = {},
                              std::size_t iterations = 200) {
  ReportData::Run run;
  run.id = id;
  run.parameters = {{"scheme", std::string("test")}, {"ranks", shape.ranks}, {"batchsize", std::int64_t{1000}}};
  run.phase_names = {"route", "lookup"};
  const CounterRng rng(seed, 0);
  auto& step = run.series["step_time"];
  Matrix<double> lookup{iterations, 2, {}}, route{iterations, 2, {}};
  Matrix<std::int64_t> bytes{iterations, 2, {}};
  for (std::size_t i = 0; i < iterations; ++i) {
    const double t = shape.level * (1.0 + shape.noise * rng.uniform(i));
    const double l = t * shape.lookup_share + shape.lookup_extra;
    const double r = t * (1.0 - shape.lookup_share);
    step.push_back(t + shape.lookup_extra);
    lookup.values.insert(lookup.values.end(), {l * 0.9, l});
    route.values.insert(route.values.end(), {r * 0.9, r});
    bytes.values.insert(bytes.values.end(), {100, 100});
  }
  run.timings["lookup"] = lookup;
  run.timings["route"] = route;
  run.counters["bytes_sent"] = bytes;
  return run;
}

ReportData::Run at_level(const std::string& id, std::uint64_t seed, double level) {
  RunShape shape;
  shape.level = level;
  return synthetic_run(id, seed, shape);
}

ReportData report_of(std::vector<ReportData::Run> runs) {
  ReportData d;
  d.runs = std::move(runs);
  return d;
}

const FigureComparison& figure(const Comparison& c, const std::string& name) {
  for (const auto& f : c.figures)
    if (f.figure == name) return f;
  throw std::runtime_error("no figure " + name);
}

CompareOptions gating(const std::vector<std::string>& gate) {
  CompareOptions o;
  o.gate = parse_gate_selection(gate);
  return o;
}

TEST(CompareReports, ALargeSlowdownRegressesTheStepAndThroughputWhilePhasesAreOnlyReported) {
  const auto c = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.2)}), {});
  EXPECT_EQ(c.matched_runs, 1u);
  EXPECT_EQ(c.gated_tests, 1u);  // step time and throughput: one question, "is the step slower"
  EXPECT_EQ(figure(c, "throughput_samples_per_s").p_holm, figure(c, "step_time").p_holm);
  const auto& step = figure(c, "step_time");
  EXPECT_NEAR(step.relative_change, 0.2, 0.03);
  EXPECT_LT(step.p_holm, 0.001);
  EXPECT_TRUE(step.gated);
  EXPECT_TRUE(step.regression);
  EXPECT_EQ(step.sampling, "block means (10 vs 10)");
  EXPECT_TRUE(figure(c, "throughput_samples_per_s").regression);  // higher is better: it fell
  const auto& lookup = figure(c, "phase:lookup");
  EXPECT_FALSE(lookup.gated);
  EXPECT_FALSE(lookup.regression);
  EXPECT_TRUE(lookup.slower);                    // it would be, tested alone
  EXPECT_FALSE(figure(c, "bytes_sent").slower);  // unchanged
  EXPECT_TRUE(c.any_regression);
  EXPECT_NEAR(c.step_time_ratio_geomean, 1.2, 0.03);
  EXPECT_EQ(c.step_time_ratios, 1u);
  // Asked to, phases gate too: lookup is 90 % of the step, far above the floor.
  const auto phases = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.2)}),
                                      gating({"step", "phases"}));
  EXPECT_EQ(phases.gated_tests, 3u);  // the step, route, lookup
  EXPECT_TRUE(figure(phases, "phase:lookup").regression);
}

TEST(CompareReports, ATinyPhaseThatJumpsCannotFailTheGate) {
  // The false alarm: the step moves 1 %, a phase worth 2 % of it moves by 50 %.
  RunShape base, next;
  base.lookup_share = next.lookup_share = 0.02;
  next.lookup_extra = 0.01;  // +0.01 s on a 0.0205 s phase, +1 % of the step
  const auto b = report_of({synthetic_run("a", 1, base)});
  const auto n = report_of({synthetic_run("b", 2, next)});
  const auto c = compare_reports(b, n, {});
  EXPECT_FALSE(c.any_regression);
  EXPECT_GT(figure(c, "phase:lookup").relative_change, 0.4);
  EXPECT_TRUE(figure(c, "phase:lookup").below_floor);
  // Gating phases does not change that: the floor needs 5 % of the step time.
  EXPECT_FALSE(compare_reports(b, n, gating({"all"})).any_regression);
  EXPECT_NE(format_comparison(c, {}).find("no significant change (below the floor)"), std::string::npos);
}

// Repetitions with exact p-values: base medians 1.00 1.01 1.02 1.10, new 1.09 1.12 1.13 1.14 give
// U = 15 of 16, a one-sided p of 2/70 = 0.029 alone.
void add_marginal_slowdown(std::vector<ReportData::Run>& base, std::vector<ReportData::Run>& next, std::int64_t ranks) {
  const double base_levels[] = {1.00, 1.01, 1.02, 1.10};
  const double next_levels[] = {1.09, 1.12, 1.13, 1.14};
  for (std::uint64_t r = 0; r < 4; ++r) {
    RunShape b, n;
    b.noise = n.noise = 0;
    b.ranks = n.ranks = ranks;
    b.level = base_levels[r];
    n.level = next_levels[r];
    base.push_back(synthetic_run("a" + std::to_string(ranks) + std::to_string(r), r, b));
    next.push_back(synthetic_run("b" + std::to_string(ranks) + std::to_string(r), r, n));
  }
}

TEST(CompareReports, HolmCorrectsForEveryGatedHypothesisOfEveryPair) {
  std::vector<ReportData::Run> base, next;
  add_marginal_slowdown(base, next, 2);
  // Alone, the pair regresses: one hypothesis (its step time and throughput), p = 2/70.
  const auto alone = compare_reports(report_of(base), report_of(next), {});
  EXPECT_EQ(alone.gated_tests, 1u);
  EXPECT_NEAR(figure(alone, "step_time").p_value, 2.0 / 70.0, 1e-12);
  EXPECT_NEAR(figure(alone, "step_time").p_holm, 2.0 / 70.0, 1e-12);
  EXPECT_TRUE(alone.any_regression);
  // A second pair (4 ranks, unchanged) joins the family: Holm doubles the smallest p to 4/70.
  for (std::uint64_t r = 0; r < 4; ++r) {
    RunShape four;
    four.ranks = 4;
    base.push_back(synthetic_run("c" + std::to_string(r), 100 + r, four));
    next.push_back(synthetic_run("d" + std::to_string(r), 200 + r, four));
  }
  const auto both = compare_reports(report_of(base), report_of(next), {});
  EXPECT_EQ(both.matched_runs, 2u);
  EXPECT_EQ(both.gated_tests, 2u);
  const auto& step = figure(both, "step_time");  // the 2-rank pair's, listed first
  EXPECT_NE(step.run.find("ranks=2"), std::string::npos);
  EXPECT_NEAR(step.p_holm, 4.0 / 70.0, 1e-12);
  EXPECT_GT(step.relative_change, 0.05);
  EXPECT_FALSE(both.any_regression);
  // At alpha 0.1 the same data regress.
  CompareOptions loose;
  loose.alpha = 0.1;
  EXPECT_TRUE(compare_reports(report_of(base), report_of(next), loose).any_regression);
}

TEST(CompareReports, TooFewRepetitionsToEverFailAreSaid) {
  // 3 against 3 runs: the smallest one-sided p is 1/20 = 0.05, never below alpha 0.05.
  std::vector<ReportData::Run> base, next;
  for (std::uint64_t r = 0; r < 3; ++r) {
    base.push_back(at_level("a" + std::to_string(r), r, 1.0));
    next.push_back(at_level("b" + std::to_string(r), 10 + r, 2.0));
  }
  const auto c = compare_reports(report_of(base), report_of(next), {});
  EXPECT_NEAR(figure(c, "step_time").p_value, 0.05, 1e-12);
  EXPECT_FALSE(c.any_regression);  // twice as slow, and the gate cannot say so
  ASSERT_EQ(c.warnings.size(), 1u);
  EXPECT_NE(c.warnings[0].find("step_time cannot fail the gate"), std::string::npos) << c.warnings[0];
  EXPECT_NE(c.warnings[0].find("at least 4 repetitions"), std::string::npos) << c.warnings[0];  // 1/70 < 0.05
  EXPECT_NE(format_comparison(c, {}).find("warning: "), std::string::npos);
}

TEST(CompareReports, FiguresOfOneSideOnlyAreListedAndAGateWithNothingToTestIsRefused) {
  auto base_run = at_level("a", 1, 1.0);
  auto next_run = at_level("b", 2, 1.0);
  next_run.phase_names.push_back("extra");
  next_run.timings["extra"] = next_run.timings["lookup"];
  base_run.phase_names = {"route"};  // lookup only in new
  base_run.timings.erase("lookup");
  const auto c = compare_reports(report_of({base_run}), report_of({next_run}), gating({"step", "phases"}));
  EXPECT_EQ(figure(c, "phase:extra").missing_on, "base");
  EXPECT_EQ(figure(c, "phase:lookup").missing_on, "base");
  EXPECT_FALSE(figure(c, "phase:extra").gated);
  EXPECT_EQ(c.gated_tests, 2u);      // the step, route
  ASSERT_EQ(c.warnings.size(), 2u);  // gated phases that could not be tested
  EXPECT_NE(format_comparison(c, gating({"step", "phases"})).find("not compared: phase:extra"), std::string::npos);
  // Without a step time on one side, the default gate has nothing to test: bad input, not a pass.
  auto no_step = at_level("b", 2, 1.0);
  no_step.series.erase("step_time");
  try {
    compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({no_step}), {});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("the verdict would test nothing"), std::string::npos) << e.what();
  }
}

TEST(CompareReports, TheSizeThresholdIsHigherForSingleRunsWhoseTestsCannotSeeRunToRunShifts) {
  // 7 % slower, far beyond the noise: single runs need 10 % (kMinChangeSingleRuns), repetitions 5 %.
  const auto single = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.07)}), {});
  EXPECT_LT(figure(single, "step_time").p_holm, 0.001);
  EXPECT_EQ(figure(single, "step_time").min_change, kMinChangeSingleRuns);
  EXPECT_FALSE(single.any_regression);
  std::vector<ReportData::Run> base, next;
  for (std::uint64_t r = 0; r < 5; ++r) {
    base.push_back(at_level("a" + std::to_string(r), 10 + r, 1.0));
    next.push_back(at_level("b" + std::to_string(r), 20 + r, 1.07));
  }
  const auto repeated = compare_reports(report_of(base), report_of(next), {});
  EXPECT_EQ(figure(repeated, "step_time").min_change, kMinChangeRepetitions);
  EXPECT_TRUE(repeated.any_regression);
  // --min-change applies to both.
  CompareOptions five;
  five.min_change = 0.05;
  EXPECT_TRUE(
      compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.07)}), five).any_regression);
}

TEST(CompareReports, OneRunAgainstRepetitionsUsesTheFirstRunAndSaysSo) {
  const auto c = compare_reports(report_of({at_level("a", 1, 1.0)}),
                                 report_of({at_level("b", 2, 1.0), at_level("c", 3, 1.0), at_level("d", 4, 1.0)}), {});
  EXPECT_EQ(figure(c, "step_time").sampling, "block means (10 vs 10); the new side's first of 3 runs");
}

TEST(CompareReports, SmallOrInsignificantChangesPassAndSpeedUpsAreImprovements) {
  // 2 %: significant with 10 blocks but below the 5 % minimum change.
  const auto small = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.02)}), {});
  EXPECT_FALSE(small.any_regression);
  // The same report against itself: no change at all.
  const auto self = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("a", 1, 1.0)}), {});
  EXPECT_FALSE(self.any_regression);
  EXPECT_EQ(figure(self, "step_time").relative_change, 0.0);
  EXPECT_EQ(self.step_time_ratio_geomean, 1.0);
  const auto faster = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 0.7)}), {});
  EXPECT_FALSE(faster.any_regression);
  EXPECT_TRUE(figure(faster, "step_time").improvement);
}

// Bandwidth improves upward: a phase's algbw 71 % lower is slower, a busbw 50 % higher is an
// improvement (they were judged as times, the wrong way round, with the same step time).
TEST(CompareReports, BandwidthSeriesAreJudgedHigherIsBetter) {
  const auto with_bandwidth = [](const std::string& id, std::uint64_t seed, double algbw, double busbw) {
    ReportData::Run run = at_level(id, seed, 1.0);
    const CounterRng rng(seed, 7);
    for (std::size_t i = 0; i < run.series["step_time"].size(); ++i) {
      run.series["exchange_vectors.algbw"].push_back(algbw * (1.0 + 0.05 * rng.uniform(i)));
      run.series["exchange_vectors.busbw"].push_back(busbw * (1.0 + 0.05 * rng.uniform(i + 1000)));
    }
    return run;
  };
  const auto c = compare_reports(report_of({with_bandwidth("a", 1, 1e9, 1e9)}),
                                 report_of({with_bandwidth("b", 2, 0.29e9, 1.5e9)}), {});
  const auto& algbw = figure(c, "exchange_vectors.algbw");
  EXPECT_TRUE(algbw.higher_is_better);
  EXPECT_NEAR(algbw.relative_change, -0.71, 0.03);
  EXPECT_TRUE(algbw.slower);
  EXPECT_FALSE(algbw.improvement);
  const auto& busbw = figure(c, "exchange_vectors.busbw");
  EXPECT_TRUE(busbw.higher_is_better);
  EXPECT_NEAR(busbw.relative_change, 0.5, 0.05);
  EXPECT_TRUE(busbw.improvement);
  EXPECT_FALSE(busbw.slower);
  EXPECT_FALSE(c.any_regression);  // series are reported, not gated by default
  EXPECT_FALSE(figure(c, "step_time").slower);
}

TEST(CompareReports, RepetitionsAreTheSamplesWhenBothSidesHaveThem) {
  std::vector<ReportData::Run> base, next;
  for (std::uint64_t r = 0; r < 5; ++r) {
    base.push_back(at_level("a" + std::to_string(r), 10 + r, 1.0));
    next.push_back(at_level("b" + std::to_string(r), 20 + r, 1.3));
  }
  const auto c = compare_reports(report_of(base), report_of(next), {});
  const auto& step = figure(c, "step_time");
  EXPECT_EQ(step.sampling, "repetitions (5 vs 5)");
  // All 5 new medians exceed all 5 base medians: exact one-sided p = 1 / C(10, 5), one test.
  EXPECT_NEAR(step.p_value, 1.0 / 252.0, 1e-12);
  EXPECT_NEAR(step.p_holm, 1.0 / 252.0, 1e-12);
  EXPECT_TRUE(step.regression);
}

TEST(CompareReports, RunsPairByParametersAndTheRefusalNamesWhatDiffers) {
  RunShape two, four, eight;
  four.ranks = 4;
  eight.ranks = 8;
  eight.level = 5.0;
  // Different rank counts do not pair; only the 2-rank runs are compared.
  const auto c = compare_reports(report_of({synthetic_run("a", 1, two), synthetic_run("b", 2, four)}),
                                 report_of({synthetic_run("c", 3, two), synthetic_run("d", 4, eight)}), {});
  EXPECT_EQ(c.matched_runs, 1u);
  EXPECT_EQ(c.unpaired_base, 1u);
  EXPECT_EQ(c.unpaired_next, 1u);
  EXPECT_FALSE(c.any_regression);
  try {
    compare_reports(report_of({synthetic_run("a", 1, two)}), report_of({synthetic_run("b", 1, four)}), {});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no runs with the same parameters"), std::string::npos) << what;
    EXPECT_NE(what.find("ranks (base 2, new 4)"), std::string::npos) << what;
    EXPECT_NE(what.find("--ignore ranks"), std::string::npos) << what;
  }
}

TEST(CompareReports, IgnoredParametersPairRunsOnPurpose) {
  RunShape four;
  four.ranks = 4;
  CompareOptions o;
  o.ignored_parameters = {"ranks"};
  const auto c = compare_reports(report_of({synthetic_run("a", 1)}), report_of({synthetic_run("b", 2, four)}), o);
  EXPECT_EQ(c.matched_runs, 1u);
  EXPECT_NE(figure(c, "step_time").run.find("ranks=2->4"), std::string::npos) << figure(c, "step_time").run;
}

// A run of `embscale collectives` (results/schema.md "Collectives reports") on 2 ranks: one call
// per iteration taking `level` (1 + noise) seconds through the Communicator and `mpi_level` as
// bare MPI; no batch, so no throughput.
ReportData::Run collectives_run(const std::string& id, std::uint64_t seed, std::int64_t size_bytes, double level,
                                double mpi_level, std::size_t iterations = 100) {
  ReportData::Run run;
  run.id = id;
  run.parameters = testing::allreduce_case_parameters(size_bytes, 2, static_cast<std::int64_t>(iterations));
  run.phase_names = {"collective"};
  const CounterRng rng(seed, 0);
  Matrix<double> per_rank{iterations, 2, {}};
  Matrix<std::int64_t> bytes{iterations, 2, {}};
  for (std::size_t i = 0; i < iterations; ++i) {
    const double t = level * (1.0 + 0.05 * rng.uniform(i));
    run.series["step_time"].push_back(t);
    run.series["mpi_time"].push_back(mpi_level * (1.0 + 0.05 * rng.uniform(i + iterations)));
    per_rank.values.insert(per_rank.values.end(), {t * 0.95, t});
    bytes.values.insert(bytes.values.end(), {size_bytes, size_bytes});
  }
  run.timings["collective"] = per_rank;
  run.counters["bytes_sent"] = bytes;
  run.counters["bytes_recv"] = bytes;
  return run;
}

TEST(CompareReports, CollectivesRunsPairBySizeAndGateOnTheirStepTimeAlone) {
  const auto base =
      report_of({collectives_run("s1k", 1, 1024, 1e-5, 1e-5), collectives_run("s4k", 2, 4096, 2e-5, 2e-5)});
  // The new side: 1 KiB calls 30 % slower through the Communicator; 4 KiB calls as fast, but the
  // bare MPI call (not the Communicator's figure) 30 % slower.
  const auto next =
      report_of({collectives_run("s1k", 3, 1024, 1.3e-5, 1e-5), collectives_run("s4k", 4, 4096, 2e-5, 2.6e-5)});
  const auto c = compare_reports(base, next, {});
  EXPECT_EQ(c.matched_runs, 2u);
  EXPECT_EQ(c.gated_tests, 2u) << "one step_time per size";
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front() << ": no throughput is expected of a collectives run";
  std::vector<std::string> names;
  for (const auto& f : c.figures)
    if (f.run.find("size_bytes=1024") != std::string::npos) names.push_back(f.figure);
  EXPECT_EQ(names, (std::vector<std::string>{"step_time", "phase:collective", "bytes_sent", "mpi_time"}));
  for (const auto& f : c.figures) {
    EXPECT_EQ(f.gated, f.figure == "step_time") << f.figure;
    const bool small = f.run.find("size_bytes=1024 ") != std::string::npos;
    if (f.figure == "step_time") {
      EXPECT_EQ(f.regression, small) << f.run;
    }
    if (f.figure == "mpi_time") {
      EXPECT_EQ(f.slower, !small) << f.run << ": reported, not gated";
    }
  }
  EXPECT_TRUE(c.any_regression);
  // The bare call's slowdown fails the verdict only when other series are gated.
  const auto other = compare_reports(report_of({collectives_run("s4k", 2, 4096, 2e-5, 2e-5)}),
                                     report_of({collectives_run("s4k", 4, 4096, 2e-5, 2.6e-5)}), gating({"other"}));
  EXPECT_EQ(other.gated_tests, 1u);
  EXPECT_TRUE(figure(other, "mpi_time").regression);
}

// A run with an evaluation: its table's last row carries the AUC and its DeLong standard error.
ReportData::Run evaluated_run(const std::string& id, std::uint64_t seed, double auc, double standard_error) {
  auto run = at_level(id, seed, 1.0);
  run.tables["evaluation/scores"] =
      ReportTable{{"iteration", "auc", "auc_ceiling", "loss", "samples", "auc_stderr"},
                  {10, 0.6, 0.9, 0.6, 8192, 0.01, 20, auc, 0.9, 0.5, 8192, standard_error},
                  ""};
  return run;
}

// Single runs: the drop over the two standard errors. 0.02 points over errors of 0.004 (z = 3.5)
// is a regression; 0.004 (z = 0.7) is not significant; 0.02 with errors of 0.02 (z = 0.7)
// neither; a significant drop smaller than --min-auc-change passes; a rise is an improvement.
TEST(CompareReports, TheLastEvaluationsAucIsGatedWithItsStandardErrorsForSingleRuns) {
  const auto judged = [](double base, double next, double error, CompareOptions o = {}) {
    const auto c = compare_reports(report_of({evaluated_run("a", 1, base, error)}),
                                   report_of({evaluated_run("b", 1, next, error)}), o);
    return figure(c, "eval_auc");
  };
  const auto drop = judged(0.88, 0.86, 0.004);
  EXPECT_TRUE(drop.gated);
  EXPECT_TRUE(drop.higher_is_better);
  EXPECT_TRUE(drop.regression);
  EXPECT_NEAR(drop.p_worse, 0.5 * std::erfc(0.02 / std::hypot(0.004, 0.004) / std::sqrt(2.0)), 1e-12);
  EXPECT_FALSE(judged(0.88, 0.876, 0.004).regression);
  EXPECT_FALSE(judged(0.88, 0.86, 0.02).regression);
  CompareOptions loose;
  loose.min_auc_change = 0.03;
  EXPECT_FALSE(judged(0.88, 0.86, 0.004, loose).regression);
  EXPECT_TRUE(judged(0.86, 0.88, 0.004).improvement);
  const auto same = judged(0.88, 0.88, 0.004);
  EXPECT_FALSE(same.regression || same.improvement);
  EXPECT_DOUBLE_EQ(same.p_worse, 0.5);
  // Not gated: reported, never a failure.
  EXPECT_FALSE(judged(0.88, 0.80, 0.004, gating({"step"})).regression);
  EXPECT_FALSE(judged(0.88, 0.80, 0.004, gating({"step"})).gated);
}

// Repetitions of other seeds: Mann-Whitney over the runs' AUCs (5 a side: every base above every
// new, p = 1/252); repetitions of one seed (all equal) are one run a side.
TEST(CompareReports, RepetitionsOfOtherSeedsAreTheAucsSamples) {
  std::vector<ReportData::Run> base, next, same_base, same_next;
  for (int r = 0; r < 5; ++r) {
    base.push_back(evaluated_run("b" + std::to_string(r), 10 + r, 0.88 + 0.002 * r, 0.004));
    next.push_back(evaluated_run("n" + std::to_string(r), 20 + r, 0.86 + 0.002 * r, 0.004));
    same_base.push_back(evaluated_run("sb" + std::to_string(r), 30 + r, 0.88, 0.004));
    same_next.push_back(evaluated_run("sn" + std::to_string(r), 40 + r, 0.878, 0.004));
  }
  const auto c = compare_reports(report_of(base), report_of(next), CompareOptions{});
  const auto& f = figure(c, "eval_auc");
  EXPECT_NEAR(f.p_worse, 1.0 / 252.0, 1e-12);
  EXPECT_DOUBLE_EQ(f.base, 0.884);
  EXPECT_DOUBLE_EQ(f.next, 0.864);
  EXPECT_TRUE(f.regression);
  EXPECT_NE(f.sampling.find("5 vs 5 runs"), std::string::npos) << f.sampling;
  const auto one_seed =
      figure(compare_reports(report_of(same_base), report_of(same_next), CompareOptions{}), "eval_auc");
  EXPECT_NE(one_seed.sampling.find("z-test"), std::string::npos) << one_seed.sampling;
  EXPECT_NE(one_seed.sampling.find("of one seed"), std::string::npos) << one_seed.sampling;
  EXPECT_FALSE(one_seed.regression);
}

// An evaluation on one side only is said and not tested; the text shows the change in AUC points.
TEST(CompareReports, AnAucOnOneSideOnlyIsSaidAndTheChangeIsInPoints) {
  const auto c = compare_reports(report_of({evaluated_run("a", 1, 0.88, 0.004)}), report_of({at_level("b", 2, 1.0)}),
                                 CompareOptions{});
  EXPECT_EQ(figure(c, "eval_auc").missing_on, "new");
  EXPECT_NE(std::find_if(c.warnings.begin(), c.warnings.end(),
                         [](const std::string& w) { return w.find("eval_auc is missing on the new side") != w.npos; }),
            c.warnings.end());
  CompareOptions o;
  const auto drop = compare_reports(report_of({evaluated_run("a", 1, 0.88, 0.004)}),
                                    report_of({evaluated_run("b", 1, 0.86, 0.004)}), o);
  const auto text = format_comparison(drop, o);
  EXPECT_NE(text.find("-0.0200"), std::string::npos) << text;
  EXPECT_NE(text.find("DeLong standard errors"), std::string::npos) << text;
  EXPECT_NE(text.find("a drop of more than 0.005 AUC points"), std::string::npos) << text;
  EXPECT_EQ(comparison_to_json(drop, o)["min_auc_change"], 0.005);
}

// A run with a dynamic table: per iteration and rank, `reads` reads of which a share `rate` (1 +
// noise u, u uniform in [-1, 1)) hit, as the counters hits and misses; deterministic for a seed.
ReportData::Run table_run(const std::string& id, std::uint64_t seed, double rate, double noise = 0.01,
                          const std::string& layer = "") {
  ReportData::Run run = synthetic_run(id, seed);
  const CounterRng rng(seed, 7);
  const std::size_t iterations = run.series["step_time"].size();
  Matrix<std::int64_t> hits{iterations, 2, {}}, misses{iterations, 2, {}};
  constexpr std::int64_t kReads = 10000;
  for (std::size_t i = 0; i < iterations; ++i)
    for (int r = 0; r < 2; ++r) {
      const double share =
          std::clamp(rate * (1.0 + noise * (2 * rng.uniform(2 * i + static_cast<std::uint64_t>(r)) - 1)), 0.0, 1.0);
      const auto h = static_cast<std::int64_t>(share * kReads);
      hits.values.push_back(h);
      misses.values.push_back(kReads - h);
    }
  run.counters[layer + "hits"] = hits;
  run.counters[layer + "misses"] = misses;
  return run;
}

TEST(CompareReports, TheHitRateOfDynamicTablesIsGatedInPoints) {
  // 0.80 against 0.70: ten points lower, higher is better, gated by default, in points.
  const auto c = compare_reports(report_of({table_run("a", 1, 0.80)}), report_of({table_run("b", 2, 0.70)}), {});
  const auto& f = figure(c, "hit_rate");
  EXPECT_TRUE(f.gated);
  EXPECT_TRUE(f.higher_is_better);
  EXPECT_TRUE(f.absolute);
  EXPECT_DOUBLE_EQ(f.min_change, kMinHitRateChange);
  EXPECT_NEAR(f.base, 0.80, 0.005);
  EXPECT_NEAR(f.next, 0.70, 0.005);
  EXPECT_TRUE(f.regression);
  EXPECT_TRUE(c.any_regression);
  // The same table one way up: an improvement, no regression; a drop inside the size rule: none.
  EXPECT_TRUE(figure(compare_reports(report_of({table_run("a", 1, 0.70)}), report_of({table_run("b", 2, 0.80)}), {}),
                     "hit_rate")
                  .improvement);
  const auto small =
      compare_reports(report_of({table_run("a", 1, 0.800, 0.0)}), report_of({table_run("b", 2, 0.797, 0.0)}), {});
  EXPECT_FALSE(figure(small, "hit_rate").regression);
  EXPECT_FALSE(small.any_regression);
  // Each layer's counters ("emb1.hits") count, summed; not gated when the gate leaves it out.
  const auto layered = compare_reports(report_of({table_run("a", 1, 0.80, 0.01, "emb1.")}),
                                       report_of({table_run("b", 2, 0.70, 0.01, "emb1.")}), gating({"step"}));
  EXPECT_FALSE(figure(layered, "hit_rate").gated);
  EXPECT_FALSE(layered.any_regression);
  EXPECT_TRUE(figure(layered, "hit_rate").slower);
  // A run of static tables (no misses) has no hit rate to judge.
  const auto plain = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.0)}), {});
  EXPECT_THROW(figure(plain, "hit_rate"), std::runtime_error);
}

TEST(CompareReports, GateNamesAreCheckedAndDescribed) {
  EXPECT_THROW(parse_gate_selection({"phase"}), InputError);
  const auto none = parse_gate_selection({"none"});
  EXPECT_FALSE(none.step || none.phases || none.bytes || none.other || none.quality || none.hit_rate);
  EXPECT_TRUE(parse_gate_selection({"quality"}).quality);
  EXPECT_TRUE(parse_gate_selection({"hit_rate"}).hit_rate);
  EXPECT_EQ(describe_as_names(GateSelection{}), "step,quality,hit_rate");
  EXPECT_EQ(describe(none), "none");
  const auto c =
      compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 2.0)}), gating({"none"}));
  EXPECT_FALSE(c.any_regression);  // nothing gated: a report, never a failure
  EXPECT_EQ(c.gated_tests, 0u);
}

TEST(CompareReports, TextAndJsonSayWhatWasGatedAndWhatTheGeometricMeanAverages) {
  CompareOptions o;
  const auto c = compare_reports(report_of({at_level("a", 1, 1.0)}), report_of({at_level("b", 2, 1.2)}), o);
  const auto j = comparison_to_json(c, o);
  EXPECT_EQ(j["regression"], true);
  EXPECT_EQ(j["gated_tests"], 1);
  EXPECT_EQ(j["figures"].size(), c.figures.size());
  EXPECT_EQ(j["figures"][0]["figure"], "step_time");
  EXPECT_TRUE(j["figures"][2]["p_holm"].is_null());  // phase:route: not gated
  const auto text = format_comparison(c, o);
  EXPECT_NE(text.find("verdict: REGRESSION"), std::string::npos) << text;
  EXPECT_NE(text.find("Holm's correction over 1 test(s)"), std::string::npos) << text;
  EXPECT_NE(text.find("step time new/base (median), geometric mean over 1 paired point(s) (a point: the runs of one "
                      "set of parameters; 1 base and 1 new run(s) in the pairs)"),
            std::string::npos)
      << text;
}

// The table a person reads: which test each p column is, every number in its unit, the
// uncorrected p-values marked, what was paired, and a warning where a side's own spread is larger
// than the change it is judged by. Five repetitions a side, the base's medians 0.9 to 1.2 s
// (interquartile range 1.0 to 1.1 s: 10 % of its 1.0 s median, above the 5 % min-change).
TEST(CompareReports, TheTableNamesItsTestsAndUnitsAndWarnsOfASpreadWiderThanTheMinChange) {
  std::vector<ReportData::Run> base, next;
  const double levels[] = {0.9, 1.0, 1.0, 1.1, 1.2};
  for (std::uint64_t r = 0; r < 5; ++r) {
    RunShape b, n;
    b.noise = n.noise = 0;
    b.level = levels[r];
    n.level = 1.0 + 0.001 * static_cast<double>(r);  // quiet: 0.2 % spread
    base.push_back(synthetic_run("a" + std::to_string(r), r, b));
    next.push_back(synthetic_run("b" + std::to_string(r), r, n));
  }
  const CompareOptions o;
  const auto c = compare_reports(report_of(base), report_of(next), o);
  EXPECT_NEAR(figure(c, "step_time").base_spread, 0.1, 1e-9);
  EXPECT_NEAR(figure(c, "step_time").next_spread, 0.002 / 1.002, 1e-9);
  const auto text = format_comparison(c, o);
  for (const std::string expected :
       {"p(change)", "p(worse)", "1002 ms", "1 k samples/s", "998 samples/s", "200 B",
        "p(change): one-sided Mann-Whitney U test in the direction the median moved",
        "[in brackets] alone, not corrected for the number of figures", "no significant change",
        "warning: batchsize=1000 ranks=2 scheme=test: step_time: the base side's own spread (interquartile range 10 % "
        "of "
        "its median, repetitions (5 vs 5)) is larger than the min-change of 5 % it is judged by",
        "geometric mean over 1 paired point(s) (a point: the runs of one set of parameters; 5 base and 5 new run(s) in "
        "the pairs)"})
    EXPECT_NE(text.find(expected), std::string::npos) << "lacks \"" << expected << "\":\n" << text;
  EXPECT_EQ(text.find("the new side's own spread"), std::string::npos) << text;
  EXPECT_NE(text.find("["), std::string::npos) << "an ungated p-value is not marked uncorrected:\n" << text;
}

}  // namespace
}  // namespace embscale::report
