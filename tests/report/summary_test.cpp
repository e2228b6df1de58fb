#include "report/summary.hpp"

#include <gtest/gtest.h>

#include <limits>

namespace embscale::report {
namespace {

TEST(FormatValue, IntegersInFullTextAsIs) {
  EXPECT_EQ(format_value(std::int64_t{123456789}), "123456789");
  EXPECT_EQ(format_value(std::int64_t{-7}), "-7");
  EXPECT_EQ(format_value(std::string("zipf")), "zipf");
  EXPECT_EQ(format_value(std::string()), "");
}

TEST(FormatValue, DoublesWithFourSignificantDigits) {
  EXPECT_EQ(format_value(0.0), "0");
  EXPECT_EQ(format_value(0.5), "0.5");
  EXPECT_EQ(format_value(0.0123456), "0.01235");
  EXPECT_EQ(format_value(0.000123456), "0.0001235");
  EXPECT_EQ(format_value(1.5e-6), "1.5e-06");
  EXPECT_EQ(format_value(1234.56), "1235");
  EXPECT_EQ(format_value(-3.14159), "-3.142");
}

TEST(FormatValue, LargeDoublesWithSiSuffix) {
  EXPECT_EQ(format_value(12346.0), "12.35k");
  EXPECT_EQ(format_value(186700.0), "186.7k");
  EXPECT_EQ(format_value(5.974e6), "5.974M");
  EXPECT_EQ(format_value(2.5e9), "2.5G");
  EXPECT_EQ(format_value(1.2e12), "1.2T");
  EXPECT_EQ(format_value(3e15), "3P");
  EXPECT_EQ(format_value(-4.2e6), "-4.2M");
  EXPECT_EQ(format_value(2e20), "2.000e+20");
}

TEST(FormatValue, RoundingMovesToTheNextSuffix) {
  EXPECT_EQ(format_value(9999.7), "10k");
  EXPECT_EQ(format_value(999960.0), "1M");
}

TEST(FormatValue, NonFinite) {
  EXPECT_EQ(format_value(std::numeric_limits<double>::quiet_NaN()), "n/a");  // not measured
  EXPECT_EQ(format_value(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_value(-std::numeric_limits<double>::infinity()), "-inf");
}

TEST(FormatSummaryTable, OneColumnPerFieldOneLinePerRun) {
  const std::vector<SummaryRow> rows{
      {{"run_id", std::string("a")}, {"ranks", std::int64_t{2}}, {"step_time_s", 0.5}},
      {{"run_id", std::string("bbbbbbbb")}, {"ranks", std::int64_t{16}}, {"step_time_s", 2.5e6}},
  };
  EXPECT_EQ(format_summary_table(rows),
            "run_id    ranks  step_time_s\n"
            "a             2          0.5\n"
            "bbbbbbbb     16         2.5M\n");
}

TEST(FormatSummaryTable, MissingFieldsShowADashAndNewFieldsAppendColumns) {
  const std::vector<SummaryRow> rows{
      {{"run_id", std::string("a")}, {"ranks", std::int64_t{2}}},
      {{"run_id", std::string("b")}, {"loss", 0.25}},
  };
  EXPECT_EQ(format_summary_table(rows),
            "run_id  ranks  loss\n"
            "a           2     -\n"
            "b           -  0.25\n");
}

TEST(FormatSummaryTable, WideTablesAreTransposed) {
  const std::vector<SummaryRow> rows{
      {{"run_id", std::string("a")}, {"throughput_samples_per_s", 1.5e6}},
      {{"run_id", std::string("bb")}, {"throughput_samples_per_s", 250.0}},
  };
  // A figure with a unit is shown in it (report/figure_units.hpp).
  EXPECT_EQ(format_summary_table(rows, 20),
            "run_id                                  a             bb\n"
            "throughput_samples_per_s  1.5 M samples/s  250 samples/s\n");
  EXPECT_EQ(format_summary_table(rows, 0),  // never transposed
            "run_id  throughput_samples_per_s\n"
            "a                1.5 M samples/s\n"
            "bb                 250 samples/s\n");
}

TEST(FormatSummaryTable, NoRuns) { EXPECT_EQ(format_summary_table({}), "(no runs)\n"); }

}  // namespace
}  // namespace embscale::report
