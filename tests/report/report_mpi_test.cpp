// ReportWriter at 1, 2 and 4 ranks, read back with the serial reader on rank 0: exact values,
// no leftovers, and failures that reach every rank instead of hanging some of them.
#include <gtest/gtest.h>

#include <mpi.h>
#include <unistd.h>
#include <map>

#include <filesystem>
#include <fstream>
#include <regex>

#include "collectives_case.hpp"
#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "report/compare.hpp"
#include "report/metadata.hpp"
#include "report/reader.hpp"
#include "report/writer.hpp"
#include "shared_directory.hpp"

namespace embscale::report {
namespace {

namespace fs = std::filesystem;

class ReportMpi : public testing::SharedDirectoryTest {
 protected:
  ReportMpi() : SharedDirectoryTest("embscale_report_mpi_") {}
  RunMetadata minimal_metadata() const { return {{{"schema_version", kReportSchemaVersion}}}; }
};

// timing[i][r] = i + 0.001 r (+ 0.5 for phase b), keys[i][r] = 10 i + r.
RunRecord known_run(const std::string& id, int rank, std::size_t iterations) {
  RunRecord run;
  run.id = id;
  run.parameters = {
      {"scheme", std::string("test")}, {"ranks", std::int64_t{4}}, {"alpha", 1.05}, {"batch", std::int64_t{64}}};
  run.phase_names = {"b", "a"};
  run.phase_meanings = {"the b phase: it does b", "a: with a colon"};
  for (std::size_t i = 0; i < iterations; ++i) {
    const double t = static_cast<double>(i) + 0.001 * rank;
    run.timings["a"].push_back(t);
    run.timings["b"].push_back(t + 0.5);
    run.counters["keys"].push_back(static_cast<std::int64_t>(10 * i) + rank);
    run.series["loss"].push_back(1.0 / static_cast<double>(i + 1));
  }
  return run;
}

void expect_known_values(const ReportData::Run& run, std::size_t iterations, std::size_t ranks) {
  const auto& a = run.timings.at("a");
  ASSERT_EQ(a.rows, iterations);
  ASSERT_EQ(a.cols, ranks);
  const auto& keys = run.counters.at("keys");
  ASSERT_EQ(keys.rows, iterations);
  ASSERT_EQ(keys.cols, ranks);
  for (std::size_t i = 0; i < iterations; ++i)
    for (std::size_t r = 0; r < ranks; ++r) {
      const double t = static_cast<double>(i) + 0.001 * static_cast<double>(r);
      ASSERT_EQ(a(i, r), t) << i << "," << r;
      ASSERT_EQ(run.timings.at("b")(i, r), t + 0.5) << i << "," << r;
      ASSERT_EQ(keys(i, r), static_cast<std::int64_t>(10 * i + r)) << i << "," << r;
    }
  EXPECT_EQ(run.series.at("loss"), known_run("", 0, iterations).series.at("loss"));
}

TEST_F(ReportMpi, WritesEveryRanksColumnAndReadsBackExactly) {
  const auto path = dir / "report.h5";
  const RunMetadata meta = collect_run_metadata(world, "embscale run --test", R"({"solver": {}})");
  const auto ranks = static_cast<std::size_t>(world.size());
  {
    ReportWriter writer(world, path, meta);
    writer.write_run(known_run("second", world.rank(), 5));  // runs keep their written order
    writer.write_run(known_run("first", world.rank(), 7));
    writer.write_summary(
        {{{"run_id", std::string("second")}, {"step_s", 0.125}, {"ranks", std::int64_t{world.size()}}},
         {{"run_id", std::string("first")}, {"step_s", 2.5e-6}, {"ranks", std::int64_t{world.size()}}}});
    EXPECT_TRUE(fs::exists(writer.temp_path()));
    writer.commit();
    EXPECT_FALSE(fs::exists(writer.temp_path()));
    EXPECT_TRUE(fs::exists(path)) << "every rank returns from commit() once the report exists";
  }
  if (world.rank() != 0) return;
  EXPECT_EQ(files_in_dir(), 1u) << "only the report remains, no temporary file";
  const ReportData data = read_report(path);
  EXPECT_EQ(std::get<std::int64_t>(data.attributes.at("schema_version")), kReportSchemaVersion);
  EXPECT_EQ(std::get<std::int64_t>(data.attributes.at("ranks")), world.size());
  EXPECT_EQ(std::get<std::string>(data.attributes.at("command_line")), "embscale run --test");
  EXPECT_EQ(std::get<std::string>(data.attributes.at("config_json")), R"({"solver": {}})");
  EXPECT_EQ(std::get<std::string>(data.attributes.at("cuda_version")), "not used");
  EXPECT_EQ(std::get<std::string>(data.attributes.at("slurm_job_id")),
            std::getenv("SLURM_JOB_ID") ? std::getenv("SLURM_JOB_ID") : "");
  ASSERT_EQ(data.runs.size(), 2u);
  EXPECT_EQ(data.runs[0].id, "second");
  EXPECT_EQ(data.runs[1].id, "first");
  expect_known_values(data.runs[0], 5, ranks);
  expect_known_values(*data.find_run("first"), 7, ranks);
  const auto& run = data.runs[0];
  EXPECT_EQ(run.phase_names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(run.phase_meanings,
            (std::map<std::string, std::string>{{"b", "the b phase: it does b"}, {"a", "a: with a colon"}}));
  EXPECT_EQ(run.samples, "raw");
  ASSERT_EQ(run.parameters.size(), 4u) << "written order, without phases and samples";
  EXPECT_EQ(run.parameters[0].name, "scheme");
  EXPECT_EQ(std::get<std::string>(run.parameters[0].value), "test");
  EXPECT_EQ(run.parameters[2].name, "alpha");
  EXPECT_EQ(std::get<double>(run.parameters[2].value), 1.05);
  EXPECT_EQ(std::get<std::int64_t>(run.parameters[3].value), 64);
  ASSERT_EQ(data.summary.size(), 2u);
  EXPECT_EQ(data.summary[1][0].name, "run_id");
  EXPECT_EQ(std::get<std::string>(data.summary[1][0].value), "first");
  EXPECT_EQ(std::get<double>(data.summary[1][1].value), 2.5e-6);
  EXPECT_EQ(std::get<std::int64_t>(data.summary[1][2].value), world.size());
}

TEST_F(ReportMpi, MetadataIsTheSameOnEveryRank) {
  const RunMetadata meta = collect_run_metadata(world, world.rank() == 0 ? "cmd" : "ignored off rank 0", "{}");
  const auto& a = meta.attributes;
  EXPECT_EQ(std::get<std::string>(a.at("command_line")), "cmd");
  EXPECT_EQ(std::get<std::string>(a.at("report_kind")), "run") << "run and sweep leave the kind to its default";
  EXPECT_EQ(
      std::get<std::string>(collect_run_metadata(world, "c", "{}", kCollectivesReport).attributes.at("report_kind")),
      "collectives");
  EXPECT_EQ(std::get<std::int64_t>(a.at("ranks")), world.size());
  EXPECT_TRUE(
      std::regex_match(std::get<std::string>(a.at("created_utc")), std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)")));
  EXPECT_FALSE(std::get<std::string>(a.at("mpi_library_version")).empty());
  const std::string hosts = std::get<std::string>(a.at("hosts"));
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  EXPECT_NE(hosts.find(host), std::string::npos) << hosts;
  for (const char* name : {"schema_version", "embscale_version", "git_sha", "config_json", "mpi_environment",
                           "mpi_transport", "machine", "gpu", "slurm_job_id", "cuda_version", "nccl_version"})
    EXPECT_TRUE(a.contains(name)) << name;
  // OpenMPI (the tests' MPI) tells the selected PML and the requests through MPI_T.
  const std::string transport = std::get<std::string>(a.at("mpi_transport"));
  EXPECT_EQ(transport.find("pml not reported"), std::string::npos) << transport;
  EXPECT_NE(transport.find("; requested: pml \""), std::string::npos) << transport;
  // Identical everywhere: the writer's agreement check passes (it throws otherwise).
  EXPECT_NO_THROW(ReportWriter(world, dir / "meta.h5", meta));
}

// One run of `embscale collectives` (results/schema.md "Collectives reports"): an allreduce of
// `size_bytes` whose call takes slowness * (1 + 0.01 (i % 7)) ms on every rank at iteration i.
RunRecord collectives_record(std::int64_t size_bytes, double slowness, int ranks) {
  RunRecord run;
  run.id = "allreduce.float.sum.out_of_place." + std::to_string(size_bytes);
  run.parameters = testing::allreduce_case_parameters(size_bytes, ranks, 40);
  run.phase_names = {"collective"};
  run.phase_meanings = {"one call of the collective through the Communicator"};
  for (int i = 0; i < 40; ++i) {
    const double t = slowness * 1e-3 * (1.0 + 0.01 * (i % 7));
    run.timings["collective"].push_back(t);
    run.series["step_time"].push_back(t);
    run.series["mpi_time"].push_back(1e-3 * (1.0 + 0.01 * (i % 5)));
    run.counters["bytes_sent"].push_back(size_bytes);
    run.counters["bytes_recv"].push_back(size_bytes);
  }
  return run;
}

TEST_F(ReportMpi, ACollectivesReportKeepsItsKindAndComparesOnItsStepTimeAlone) {
  const auto write = [&](const fs::path& path, double slowness) {
    ReportWriter writer(world, path, collect_run_metadata(world, "embscale collectives", "{}", kCollectivesReport));
    for (const std::int64_t size : {1024, 4096}) writer.write_run(collectives_record(size, slowness, world.size()));
    writer.commit();
  };
  write(dir / "base.h5", 1.0);
  write(dir / "new.h5", 1.5);
  if (world.rank() != 0) return;
  const ReportData base = read_report(dir / "base.h5");
  const ReportData next = read_report(dir / "new.h5");
  EXPECT_EQ(base.kind(), "collectives");
  const Comparison c = compare_reports(base, next, {});
  EXPECT_EQ(c.matched_runs, 2u) << "a pair per size: the parameters are equal";
  EXPECT_EQ(c.gated_tests, 2u) << "step_time alone gates by default";
  EXPECT_TRUE(c.warnings.empty()) << c.warnings.front();
  for (const auto& f : c.figures) {
    EXPECT_NE(f.figure, "throughput_samples_per_s") << "a collectives run has no batch";
    EXPECT_EQ(f.gated, f.figure == "step_time") << f.figure;
    EXPECT_EQ(f.regression, f.figure == "step_time") << f.figure << " " << f.run;
  }
  EXPECT_NEAR(c.step_time_ratio_geomean, 1.5, 1e-9);
}

TEST_F(ReportMpi, AnUncreatablePathFailsOnEveryRankWithoutHanging) {
  const auto expect_input_error = [&](const fs::path& path, const std::string& reason) {
    try {
      ReportWriter writer(world, path, minimal_metadata());
      ADD_FAILURE() << "no throw for " << path;
    } catch (const InputError& e) {
      EXPECT_EQ(std::string(e.what()), path.string() + ": cannot create report: " + reason);
    }
  };
  expect_input_error(dir / "missing" / "r.h5", "directory " + (dir / "missing").string() + " does not exist");
  if (world.rank() == 0) std::ofstream(dir / "plain_file") << "x";
  world.barrier();
  expect_input_error(dir / "plain_file" / "r.h5", (dir / "plain_file").string() + " is not a directory");
  expect_input_error(dir, "it is a directory");
  if (geteuid() != 0) {  // root writes anywhere
    const auto locked = dir / "locked";
    if (world.rank() == 0)
      fs::create_directory(locked), fs::permissions(locked, fs::perms::owner_read | fs::perms::owner_exec);
    world.barrier();
    expect_input_error(locked / "r.h5", "directory " + locked.string() + " is not writable (Permission denied)");
  }
  world.barrier();
  if (world.rank() == 0) {
    EXPECT_EQ(files_in_dir(), geteuid() != 0 ? 2u : 1u);
  }
}

TEST_F(ReportMpi, AWriterDestroyedWithoutCommitLeavesNothing) {
  {
    ReportWriter writer(world, dir / "abandoned.h5", minimal_metadata());
    writer.write_run(known_run("r", world.rank(), 3));
    EXPECT_TRUE(fs::exists(writer.temp_path()));
  }
  world.barrier();
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST_F(ReportMpi, RanksThatDisagreeAllThrowInsteadOfHanging) {
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  {
    ReportWriter writer(world, dir / "r.h5", minimal_metadata());
    RunRecord run = known_run("r", world.rank(), 3);
    if (world.rank() == 1) run.timings["only_on_rank_1"] = {1.0, 2.0, 3.0};
    EXPECT_THROW(writer.write_run(run), Error);
    RunRecord longer = known_run("r", world.rank(), world.rank() == 1 ? 4 : 3);
    longer.series.clear();
    try {
      writer.write_run(longer);
      ADD_FAILURE() << "no throw";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("timings/a has 3 iterations on one rank and 4 on another"),
                std::string::npos)
          << e.what();
    }
    // The table's layout must agree (rank 0 alone writes the values).
    const SummaryRow row{{"x", std::int64_t{1}}};
    EXPECT_THROW(writer.write_summary(std::vector<SummaryRow>(world.rank() == 1 ? 2 : 1, row)), Error);
  }
  RunMetadata differs = minimal_metadata();
  differs.attributes["rank"] = std::int64_t{world.rank()};
  EXPECT_THROW(ReportWriter(world, dir / "m.h5", differs), Error);
  world.barrier();
  EXPECT_TRUE(fs::is_empty(dir));
}

TEST_F(ReportMpi, AnHdf5FailureSaysWhatFailedAndWhyOnEveryRank) {
  ReportWriter writer(world, dir / "dup.h5", minimal_metadata());
  writer.write_run(known_run("r", world.rank(), 2));
  try {
    writer.write_run(known_run("r", world.rank(), 2));
    ADD_FAILURE() << "no throw";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "create group /runs/r: unable to create group: name already exists [H5Gcreate2]");
  }
  writer.write_run(known_run("s", world.rank(), 2));  // a failed call leaves the writer usable
  writer.commit();
}

TEST_F(ReportMpi, ARankWithAnEmptyColumnWritesZeros) {
  const auto path = dir / "roles.h5";
  {
    ReportWriter writer(world, path, minimal_metadata());
    RunRecord run = known_run("r", world.rank(), 4);
    if (world.rank() % 2 == 1) run.counters["keys"].clear();  // e.g. a server rank: no trainer keys
    writer.write_run(run);
    writer.commit();
  }
  if (world.rank() != 0) return;
  const ReportData data = read_report(path);
  const auto& keys = data.runs.at(0).counters.at("keys");
  ASSERT_EQ(keys.rows, 4u);
  for (std::size_t i = 0; i < 4; ++i)
    for (std::size_t r = 0; r < keys.cols; ++r)
      EXPECT_EQ(keys(i, r), r % 2 == 1 ? 0 : static_cast<std::int64_t>(10 * i + r));
}

TEST_F(ReportMpi, ManyChunksLargeAttributesAndEmptyDatasets) {
  const auto path = dir / "large.h5";
  RunMetadata meta = minimal_metadata();
  meta.attributes["config_json"] = std::string(100'000, 'c');  // beyond the 64 KiB header limit
  meta.attributes["empty"] = std::string();
  const std::size_t iterations = 70'000;  // several 1 MiB chunks at every rank count
  {
    ReportWriter writer(world, path, meta);
    writer.write_run(known_run("long", world.rank(), iterations));
    RunRecord empty = known_run("empty", world.rank(), 0);
    empty.timings["a"] = {};
    empty.series["loss"] = {};
    writer.write_run(empty);
    writer.write_summary({});
    writer.commit();
  }
  if (world.rank() != 0) return;
  const ReportData data = read_report(path);
  EXPECT_EQ(std::get<std::string>(data.attributes.at("config_json")), std::string(100'000, 'c'));
  EXPECT_EQ(std::get<std::string>(data.attributes.at("empty")), "");
  EXPECT_TRUE(data.summary.empty());
  expect_known_values(*data.find_run("long"), iterations, static_cast<std::size_t>(world.size()));
  const auto& empty = *data.find_run("empty");
  EXPECT_EQ(empty.timings.at("a").rows, 0u);
  EXPECT_EQ(empty.timings.at("a").cols, static_cast<std::size_t>(world.size()));
  EXPECT_TRUE(empty.series.at("loss").empty());
}

}  // namespace
}  // namespace embscale::report
