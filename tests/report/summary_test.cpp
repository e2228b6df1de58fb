#include "report/summary.hpp"

#include <gtest/gtest.h>

namespace embscale::report {
namespace {

TEST(FormatValue, ReadableNumbers) {
  EXPECT_EQ(format_value(std::int64_t{123456789}), "123456789");
  EXPECT_EQ(format_value(0.0123456), "0.01235");
  EXPECT_EQ(format_value(186700.0), "186.7k");
  EXPECT_EQ(format_value(5.974e6), "5.974M");
  EXPECT_EQ(format_value(2.5e9), "2.5G");
  EXPECT_EQ(format_value(std::string("zipf")), "zipf");
}

TEST(FormatSummaryTable, OneLinePerFieldOneColumnPerRun) {
  const std::vector<SummaryRow> rows{
      {{"run_id", std::string("a")}, {"ranks", std::int64_t{2}}, {"step_time_s", 0.5}},
      {{"run_id", std::string("bb")}, {"ranks", std::int64_t{16}}, {"step_time_s", 0.25}},
  };
  EXPECT_EQ(format_summary_table(rows),
            "run_id         a    bb\n"
            "ranks          2    16\n"
            "step_time_s  0.5  0.25\n");
  EXPECT_EQ(format_summary_table({}), "(no runs)\n");
}

}  // namespace
}  // namespace embscale::report
