// The spread of repeated runs against values computed by hand: two runs of one point (step times
// 1 s and 3 s: median and mean 2 s, sample stddev sqrt(2) s, CV 0.7071), a third point alone (no
// spread), and the table a person reads.
#include "report/repetition_spread.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace embscale::report {
namespace {

ReportData::Run run(const std::string& id, std::int64_t ranks) {
  ReportData::Run r;
  r.id = id;
  r.parameters = {{"scheme", std::string("row_wise")}, {"ranks", ranks}};
  return r;
}

SummaryRow row(const std::string& id, double step, double throughput) {
  return {{"run_id", id}, {"step_time_median_s", step}, {"throughput_samples_per_s", throughput}};
}

TEST(RepetitionSpread, RunsWithEqualParametersShowMedianMeanStddevAndCv) {
  ReportData data;
  data.runs = {run("a", 2), run("b", 4), run("c", 2)};
  data.summary = {row("a", 1.0, 4000.0), row("b", 5.0, 800.0), row("c", 3.0, 2000.0)};
  const auto spreads = repetition_spread(data);
  ASSERT_EQ(spreads.size(), 2u);  // ranks=2's step time and throughput; ranks=4 ran once
  const auto& step = spreads[0];
  EXPECT_EQ(step.point, "ranks=2");
  EXPECT_EQ(step.figure, "step_time_median_s");
  EXPECT_EQ(step.runs, 2u);
  EXPECT_DOUBLE_EQ(step.median, 2.0);
  EXPECT_DOUBLE_EQ(step.mean, 2.0);
  EXPECT_DOUBLE_EQ(step.stddev, std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(step.cv, std::sqrt(2.0) / 2.0);
  EXPECT_EQ(spreads[1].figure, "throughput_samples_per_s");
  EXPECT_DOUBLE_EQ(spreads[1].median, 3000.0);
  const std::string text = format_repetition_spread(spreads);
  EXPECT_NE(text.find("repetitions (runs with equal parameters)"), std::string::npos) << text;
  EXPECT_NE(text.find("2000 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("1414 ms"), std::string::npos) << text;
  EXPECT_NE(text.find("70.7%"), std::string::npos) << text;
  EXPECT_NE(text.find("3 k samples/s"), std::string::npos) << text;
}

TEST(RepetitionSpread, NothingRepeatedPrintsNothing) {
  ReportData data;
  data.runs = {run("a", 2), run("b", 4)};
  data.summary = {row("a", 1.0, 4000.0), row("b", 5.0, 800.0)};
  EXPECT_TRUE(repetition_spread(data).empty());
  EXPECT_EQ(format_repetition_spread({}), "");
}

}  // namespace
}  // namespace embscale::report
