#include "report/compare.hpp"

#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/rng.hpp"

namespace embscale::report {
namespace {

// A run whose step time per iteration is `level` times (1 + noise in [0, 0.05)), with one phase
// carrying all of it; 2 ranks; deterministic for a seed.
ReportData::Run synthetic_run(const std::string& id, std::int64_t ranks, double level, std::uint64_t seed,
                              std::size_t iterations = 200) {
  ReportData::Run run;
  run.id = id;
  run.parameters = {{"scheme", std::string("test")}, {"ranks", ranks}, {"batchsize", std::int64_t{1000}}};
  run.phase_names = {"lookup"};
  const CounterRng rng(seed, 0);
  auto& step = run.series["step_time"];
  Matrix<double> lookup{iterations, 2, {}};
  Matrix<std::int64_t> bytes{iterations, 2, {}};
  for (std::size_t i = 0; i < iterations; ++i) {
    const double t = level * (1.0 + 0.05 * rng.uniform(i));
    step.push_back(t);
    lookup.values.insert(lookup.values.end(), {t * 0.9, t});
    bytes.values.insert(bytes.values.end(), {100, 100});
  }
  run.timings["lookup"] = lookup;
  run.counters["bytes_sent"] = bytes;
  return run;
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

TEST(CompareReports, ALargeSlowdownIsARegressionAndThroughputFallsWithIt) {
  const auto c = compare_reports(report_of({synthetic_run("a", 2, 1.0, 1)}), report_of({synthetic_run("b", 2, 1.2, 2)}), {});
  EXPECT_EQ(c.matched_runs, 1u);
  const auto& step = figure(c, "step_time");
  EXPECT_NEAR(step.relative_change, 0.2, 0.03);
  EXPECT_LT(step.p_value, 0.001);
  EXPECT_TRUE(step.regression);
  EXPECT_EQ(step.sampling, "block means (10 vs 10)");
  EXPECT_TRUE(figure(c, "throughput_samples_per_s").regression);  // higher is better: it fell
  EXPECT_TRUE(figure(c, "phase:lookup").regression);
  EXPECT_FALSE(figure(c, "bytes_sent").regression);               // unchanged
  EXPECT_TRUE(c.any_regression);
  EXPECT_NEAR(c.geomean_time_ratio, 1.2, 0.03);
}

TEST(CompareReports, SmallOrInsignificantChangesPassAndSpeedUpsAreImprovements) {
  // 2 %: significant with 10 blocks but below the 5 % minimum change.
  const auto small = compare_reports(report_of({synthetic_run("a", 2, 1.0, 1)}), report_of({synthetic_run("b", 2, 1.02, 2)}), {});
  EXPECT_FALSE(small.any_regression);
  // The same report against itself: no change at all.
  const auto self = compare_reports(report_of({synthetic_run("a", 2, 1.0, 1)}), report_of({synthetic_run("a", 2, 1.0, 1)}), {});
  EXPECT_FALSE(self.any_regression);
  EXPECT_EQ(figure(self, "step_time").relative_change, 0.0);
  const auto faster = compare_reports(report_of({synthetic_run("a", 2, 1.0, 1)}), report_of({synthetic_run("b", 2, 0.7, 2)}), {});
  EXPECT_FALSE(faster.any_regression);
  EXPECT_TRUE(figure(faster, "step_time").improvement);
}

TEST(CompareReports, RepetitionsAreTheSamplesWhenBothSidesHaveThem) {
  std::vector<ReportData::Run> base, next;
  for (std::uint64_t r = 0; r < 5; ++r) {
    base.push_back(synthetic_run("a" + std::to_string(r), 2, 1.0, 10 + r));
    next.push_back(synthetic_run("b" + std::to_string(r), 2, 1.3, 20 + r));
  }
  const auto c = compare_reports(report_of(base), report_of(next), {});
  const auto& step = figure(c, "step_time");
  EXPECT_EQ(step.sampling, "repetitions (5 vs 5)");
  // All 5 new medians exceed all 5 base medians: exact one-sided p = 1 / C(10, 5).
  EXPECT_NEAR(step.p_value, 1.0 / 252.0, 1e-12);
  EXPECT_TRUE(step.regression);
}

TEST(CompareReports, RunsMatchByParametersAndDisjointReportsAreBadInput) {
  // Different rank counts do not match; only the 2-rank runs are compared.
  const auto c = compare_reports(report_of({synthetic_run("a", 2, 1.0, 1), synthetic_run("b", 4, 1.0, 2)}),
                                 report_of({synthetic_run("c", 2, 1.0, 3), synthetic_run("d", 8, 5.0, 4)}), {});
  EXPECT_EQ(c.matched_runs, 1u);
  EXPECT_FALSE(c.any_regression);
  try {
    compare_reports(report_of({synthetic_run("a", 2, 1.0, 1)}), report_of({synthetic_run("b", 4, 1.0, 1)}), {});
    FAIL() << "no throw";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no runs with the same parameters"), std::string::npos) << what;
    EXPECT_NE(what.find("ranks=4"), std::string::npos) << what;
  }
}

TEST(CompareReports, JsonCarriesEveryFigureAndTheVerdict) {
  CompareOptions o;
  const auto c = compare_reports(report_of({synthetic_run("a", 2, 1.0, 1)}), report_of({synthetic_run("b", 2, 1.2, 2)}), o);
  const auto j = comparison_to_json(c, o);
  EXPECT_EQ(j["regression"], true);
  EXPECT_EQ(j["figures"].size(), c.figures.size());
  EXPECT_EQ(j["figures"][0]["figure"], "step_time");
  EXPECT_NE(format_comparison(c).find("verdict: REGRESSION"), std::string::npos);
}

}  // namespace
}  // namespace embscale::report
