#include "report/gbench_json.hpp"

#include <gtest/gtest.h>

#include <fstream>

#include "core/error.hpp"
#include "report/compare.hpp"

namespace embscale::report {
namespace {

// A Google Benchmark JSON file with 5 repetitions of two benchmarks (times in ns scaled by
// `slow_a` for BM_A) plus the aggregate rows Google Benchmark appends.
nlohmann::json gbench_file(double slow_a) {
  nlohmann::json benchmarks = nlohmann::json::array();
  for (int rep = 0; rep < 5; ++rep) {
    benchmarks.push_back({{"name", "BM_A"},
                          {"run_name", "BM_A"},
                          {"run_type", "iteration"},
                          {"repetition_index", rep},
                          {"real_time", (100.0 + rep) * slow_a},
                          {"cpu_time", (99.0 + rep) * slow_a},
                          {"time_unit", "ns"}});
    benchmarks.push_back({{"name", "BM_B"},
                          {"run_name", "BM_B"},
                          {"run_type", "iteration"},
                          {"repetition_index", rep},
                          {"real_time", 2.0 + 0.01 * rep},
                          {"cpu_time", 2.0},
                          {"time_unit", "us"}});
  }
  benchmarks.push_back({{"name", "BM_A_mean"},
                        {"run_name", "BM_A"},
                        {"run_type", "aggregate"},
                        {"aggregate_name", "mean"},
                        {"real_time", 1e9},
                        {"cpu_time", 1e9},
                        {"time_unit", "ns"}});
  return {{"context", {{"host_name", "test"}}}, {"benchmarks", benchmarks}};
}

class GbenchJson : public testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  std::filesystem::path write(const std::string& name, const std::string& text) {
    std::ofstream(dir / name) << text;
    return dir / name;
  }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "embscale_gbench_json_test";
};

TEST_F(GbenchJson, RepetitionsBecomeRunsInSecondsAndAggregatesAreSkipped) {
  const auto data = read_comparable(write("base.json", gbench_file(1.0).dump()));
  ASSERT_EQ(data.runs.size(), 10u);
  EXPECT_EQ(data.kind(), "google_benchmark") << "compare refuses it beside an HDF5 report by its kind";
  EXPECT_EQ(std::get<std::string>(data.runs[0].parameters[0].value), "BM_A");
  EXPECT_DOUBLE_EQ(data.runs[0].series.at("real_time")[0], 100e-9);
  EXPECT_DOUBLE_EQ(data.runs[1].series.at("real_time")[0], 2e-6);
}

TEST_F(GbenchJson, CompareFindsTheSlowedBenchmarkOnly) {
  const auto base = read_comparable(write("base.json", gbench_file(1.0).dump()));
  const auto next = read_comparable(write("new.json", gbench_file(1.3).dump()));
  const auto c = compare_reports(base, next, {});
  EXPECT_EQ(c.matched_runs, 2u);
  for (const auto& f : c.figures) {
    const bool a = f.run == "benchmark=BM_A";
    // real_time gates by default (a benchmark's step); cpu_time is reported, not gated.
    EXPECT_EQ(f.regression, a && f.figure == "real_time") << f.run << " " << f.figure;
    EXPECT_EQ(f.slower, a && f.figure == "cpu_time") << f.run << " " << f.figure;
    EXPECT_EQ(f.sampling, "repetitions (5 vs 5)");
    if (a) {
      EXPECT_NEAR(f.p_value, 1.0 / 252.0, 1e-12);  // all 5 new above all 5 base
    }
  }
  EXPECT_TRUE(c.any_regression);
}

TEST_F(GbenchJson, BadFilesAreNamed) {
  try {
    read_comparable(write("broken.json", "{\"benchmarks\": ["));
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("broken.json: invalid JSON"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_comparable(write("other.json", "{\"runs\": []}")), InputError);
}

}  // namespace
}  // namespace embscale::report
