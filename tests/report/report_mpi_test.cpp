// ReportWriter at 1, 2 and 4 ranks, read back with the serial reader: exact values, no leftovers.
#include <gtest/gtest.h>
#include <mpi.h>

#include <filesystem>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "report/reader.hpp"
#include "report/writer.hpp"

namespace embscale::report {
namespace {

// A directory every rank agrees on (named by rank 0's pid), removed at the end.
class ReportMpi : public testing::Test {
 protected:
  ReportMpi() : world(MPI_COMM_WORLD) {
    long pid = world.rank() == 0 ? static_cast<long>(getpid()) : 0;
    world.bcast(std::span<long>(&pid, 1), 0);
    dir = std::filesystem::temp_directory_path() / ("embscale_report_mpi_" + std::to_string(pid));
    if (world.rank() == 0) std::filesystem::create_directories(dir);
    world.barrier();
  }
  ~ReportMpi() override {
    world.barrier();
    if (world.rank() == 0) std::filesystem::remove_all(dir);
  }
  comm::MpiCommunicator world;
  std::filesystem::path dir;
};

RunRecord known_run(int rank, std::size_t iterations) {
  RunRecord run;
  run.id = "run0";
  run.parameters = {{"scheme", std::string("test")}, {"ranks", std::int64_t{4}}, {"alpha", 1.05}};
  run.phase_names = {"a", "b"};
  for (const char* phase : {"a", "b"})
    for (std::size_t i = 0; i < iterations; ++i)
      run.timings[phase].push_back(static_cast<double>(i) + 0.001 * rank + (phase[0] == 'b' ? 0.5 : 0.0));
  for (std::size_t i = 0; i < iterations; ++i) run.counters["keys"].push_back(static_cast<std::int64_t>(i * 10 + static_cast<std::size_t>(rank)));
  for (std::size_t i = 0; i < iterations; ++i) run.series["loss"].push_back(1.0 / static_cast<double>(i + 1));
  return run;
}

TEST_F(ReportMpi, WritesEveryRanksColumnAndReadsBackExactly) {
  const auto path = dir / "report.h5";
  RunMetadata meta;
  meta.attributes = {{"schema_version", kReportSchemaVersion}, {"note", std::string("hello")}, {"pi", 3.25}};
  {
    ReportWriter writer(world, path, meta);
    writer.write_run(known_run(world.rank(), 5));
    writer.write_summary({{{"run_id", std::string("run0")}, {"step_s", 0.125}, {"ranks", std::int64_t{world.size()}}}});
    writer.commit();
  }
  if (world.rank() == 0) {
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator()), 1)
        << "only the report remains, no temporary file";
    const ReportData data = read_report(path);
    EXPECT_EQ(std::get<std::string>(data.attributes.at("note")), "hello");
    EXPECT_EQ(std::get<double>(data.attributes.at("pi")), 3.25);
    ASSERT_EQ(data.runs.size(), 1u);
    const auto& run = data.runs[0];
    EXPECT_EQ(run.id, "run0");
    const auto& a = run.timings.at("a");
    ASSERT_EQ(a.rows, 5u);
    ASSERT_EQ(a.cols, static_cast<std::size_t>(world.size()));
    for (std::size_t i = 0; i < 5; ++i)
      for (std::size_t r = 0; r < a.cols; ++r) {
        EXPECT_EQ(a(i, r), static_cast<double>(i) + 0.001 * static_cast<double>(r));
        EXPECT_EQ(run.timings.at("b")(i, r), static_cast<double>(i) + 0.001 * static_cast<double>(r) + 0.5);
        EXPECT_EQ(run.counters.at("keys")(i, r), static_cast<std::int64_t>(i * 10 + r));
      }
    EXPECT_EQ(run.series.at("loss"), known_run(0, 5).series.at("loss"));
    bool saw_scheme = false;
    for (const auto& p : run.parameters)
      if (p.name == "scheme") saw_scheme = std::get<std::string>(p.value) == "test";
    EXPECT_TRUE(saw_scheme);
    ASSERT_EQ(data.summary.size(), 1u);
    EXPECT_EQ(std::get<std::string>(data.summary[0][0].value), "run0");
    EXPECT_EQ(std::get<double>(data.summary[0][1].value), 0.125);
    EXPECT_EQ(std::get<std::int64_t>(data.summary[0][2].value), world.size());
  }
}

TEST_F(ReportMpi, AnUnwritablePathFailsOnEveryRankWithoutHanging) {
  RunMetadata meta;
  meta.attributes = {{"schema_version", kReportSchemaVersion}};
  const auto path = dir / "missing" / "r.h5";
  try {
    ReportWriter writer(world, path, meta);
    FAIL() << "no throw";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), path.string() + ": cannot create report: directory " + (dir / "missing").string() + " does not exist");
  }
}

TEST_F(ReportMpi, AWriterDestroyedWithoutCommitLeavesNothing) {
  RunMetadata meta;
  meta.attributes = {{"schema_version", kReportSchemaVersion}};
  {
    ReportWriter writer(world, dir / "abandoned.h5", meta);
    writer.write_run(known_run(world.rank(), 3));
  }
  world.barrier();
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
}  // namespace embscale::report
