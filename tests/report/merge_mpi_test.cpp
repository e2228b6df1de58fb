// merge_reports on reports written by every rank (1, 2, 4): the merged file holds each input's
// runs exactly as the input does (read back and compared field by field), their provenance under
// /runs/<id>/metadata, and the /summary rows in input order; conflicting inputs are refused.
// Tables (/runs/<id>/<group>/<name>) come along with their runs, next to the group metadata.
#include <gtest/gtest.h>
#include <mpi.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "report/merge.hpp"
#include "report/metadata.hpp"
#include "report/reader.hpp"
#include "report/writer.hpp"
#include "shared_directory.hpp"

namespace embscale::report {
namespace {

namespace fs = std::filesystem;

class MergeMpi : public testing::SharedDirectoryTest {
 protected:
  MergeMpi() : SharedDirectoryTest("embscale_merge_mpi_") {}

  // A report of one run `id` (point/repetition set), values depending on the rank and `seed`.
  fs::path write(const std::string& file, const std::string& id, int seed, const std::string& extra_column = "",
                 std::string_view kind = kRunReport, SummaryValue extra_value = 1.0) {
    RunRecord run;
    run.id = id;
    run.parameters = {{"seed", std::int64_t{seed}}, {"alpha", 0.5 * seed}};
    run.phase_names = {"x", "y"};
    run.point = seed;
    run.repetition = 0;
    for (int i = 0; i < 6; ++i) {
      run.timings["x"].push_back(seed + i + 0.01 * world.rank());
      run.timings["y"].push_back(2.0 * seed + i);
      run.counters["keys"].push_back(100 * seed + 10 * i + world.rank());
      run.series["step_time"].push_back(0.1 * seed + i);
    }
    // Tables in two groups, one of them empty (embscale sweep and merge copy them with the run).
    run.tables["eviction/hit_rate"] = {
        {"step", "table", "lru"}, {0, 0.25 * seed, 0.5, 1, 0.75, 0.125 * seed}, "per step"};
    run.tables["eviction/empty"] = {{"step"}, {}, ""};
    run.tables["curves/miss_ratio"] = {{"capacity", "miss_ratio"}, {1024, 0.5, 2048, 0.25 + seed}, ""};
    SummaryRow row{{"run_id", id}, {"seed", std::int64_t{seed}}, {"step_s", 0.25 * seed}};
    if (!extra_column.empty()) row.push_back({extra_column, extra_value});
    const auto path = dir / file;
    ReportWriter writer(world, path,
                        collect_run_metadata(world, "writer " + id, "{\"seed\": " + std::to_string(seed) + "}", kind));
    writer.write_run(run);
    writer.write_summary({row});
    writer.commit();
    return path;
  }

  std::string merge_error(const std::vector<fs::path>& inputs, std::map<std::string, SummaryValue> attributes = {
                                                                   {"schema_version", kReportSchemaVersion}}) const {
    try {
      merge_reports(inputs, dir / "bad.h5", attributes);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }
};

void expect_same_run(const ReportData::Run& a, const ReportData::Run& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.phase_names, b.phase_names);
  EXPECT_EQ(a.point, b.point);
  EXPECT_EQ(a.repetition, b.repetition);
  ASSERT_EQ(a.parameters.size(), b.parameters.size());
  for (std::size_t i = 0; i < a.parameters.size(); ++i) {
    EXPECT_EQ(a.parameters[i].name, b.parameters[i].name);
    EXPECT_EQ(a.parameters[i].value, b.parameters[i].value);
  }
  for (const auto& [name, m] : a.timings) EXPECT_EQ(m.values, b.timings.at(name).values) << name;
  for (const auto& [name, m] : a.counters) EXPECT_EQ(m.values, b.counters.at(name).values) << name;
  EXPECT_EQ(a.series, b.series);
  EXPECT_EQ(a.tables, b.tables);
  EXPECT_EQ(a.timings.size(), b.timings.size());
  EXPECT_EQ(a.counters.size(), b.counters.size());
}

TEST_F(MergeMpi, CopiesEveryRunWithItsProvenanceAndConcatenatesTheSummary) {
  const auto first = write("first.h5", "p0.r0", 1);
  const auto second = write("second.h5", "p1.r0", 2);
  if (world.rank() != 0) return;
  const auto merged_path = dir / "merged.h5";
  merge_reports({first, second}, merged_path,
                {{"schema_version", kReportSchemaVersion}, {"sweep_axes", std::string("seed")}});
  const auto merged = read_report(merged_path);
  const auto a = read_report(first);
  const auto b = read_report(second);
  EXPECT_EQ(std::get<std::string>(merged.attributes.at("sweep_axes")), "seed");
  ASSERT_EQ(merged.runs.size(), 2u);
  expect_same_run(merged.runs[0], a.runs[0]);
  expect_same_run(merged.runs[1], b.runs[0]);
  ASSERT_EQ(merged.runs[1].tables.size(), 3u) << "every table, the empty one too";
  EXPECT_EQ(merged.runs[1].tables.at("eviction/hit_rate")(1, 2), 0.25) << "rows x columns as written";
  EXPECT_EQ(merged.runs[1].timings.at("x").cols, static_cast<std::size_t>(world.size()));
  EXPECT_EQ(merged.runs[0].metadata, a.attributes) << "the input's root attributes, as its provenance";
  EXPECT_EQ(std::get<std::string>(merged.runs[1].metadata.at("command_line")), "writer p1.r0");
  ASSERT_EQ(merged.summary.size(), 2u);
  EXPECT_EQ(merged.summary[0], a.summary[0]);
  EXPECT_EQ(merged.summary[1], b.summary[0]);

  // A merged report merges again; its runs keep their first provenance.
  const auto third = dir / "third.h5";
  fs::copy_file(first, dir / "copy.h5");
  // Sweep-named runs: `run --id` would not help, the message says why instead.
  EXPECT_NE(merge_error({merged_path, dir / "copy.h5"})
                .find("run p0.r0 is also in " + merged_path.string() +
                      "; run ids must be unique across the merged "
                      "reports: the reports of two sweeps (whose runs are named p<point>.r<repetition>) cannot be "
                      "merged into one"),
            std::string::npos);
  merge_reports({merged_path}, third, {{"schema_version", kReportSchemaVersion}});
  const auto merged_twice = read_report(third);
  EXPECT_EQ(merged_twice.runs[1].metadata, b.attributes);
  EXPECT_EQ(merged_twice.runs[1].tables, b.runs[0].tables) << "beside the group metadata, which holds no table";
  const auto files = std::distance(fs::directory_iterator(dir), fs::directory_iterator());
  EXPECT_EQ(files, 5) << "first, second, merged, copy, third: no temporary file left by the failed merge";
}

// A column of integers in one report and strings in another (a multi-layer config's
// embedding_vec_size: one dim where its layers agree, else each layer's) merges as strings.
TEST_F(MergeMpi, IntegersBesideStringsBecomeStrings) {
  const auto agreed = write("agreed.h5", "agreed", 1, "dims", kRunReport, std::int64_t{16});
  const auto each = write("each.h5", "each", 2, "dims", kRunReport, std::string("emb1:16,emb2:32"));
  if (world.rank() != 0) return;
  const auto merged_path = dir / "dims.h5";
  merge_reports({agreed, each}, merged_path, {{"schema_version", kReportSchemaVersion}});
  const auto merged = read_report(merged_path);
  ASSERT_EQ(merged.summary.size(), 2u);
  const auto dims = [&](std::size_t r) {
    for (const auto& field : merged.summary[r])
      if (field.name == "dims") return std::get<std::string>(field.value);
    return std::string("(none)");
  };
  EXPECT_EQ(dims(0), "16");
  EXPECT_EQ(dims(1), "emb1:16,emb2:32");
}

TEST_F(MergeMpi, RefusesConflictingInputs) {
  const auto one = write("one.h5", "same", 1);
  const auto two = write("two.h5", "same", 2);
  const auto other = write("other.h5", "other", 3, "extra");
  const auto clash = write("clash.h5", "clash", 4, "extra", kRunReport, std::string("text"));
  if (world.rank() != 0) return;
  EXPECT_EQ(merge_error({one, two}), two.string() + ": run same is also in " + one.string() +
                                         "; run ids must be unique across the merged reports: give each run its own "
                                         "id with `embscale run --id NAME`");
  EXPECT_EQ(merge_error({other, clash}),
            clash.string() + ": /summary column extra has another type than in " + other.string());
  EXPECT_EQ(merge_error({one, dir / "missing.h5"}), (dir / "missing.h5").string() + ": no such report file");
  EXPECT_FALSE(fs::exists(dir / "bad.h5"));
  try {
    merge_reports({one}, one, {});
    ADD_FAILURE() << "the output cannot be an input";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), one.string() + ": the merged report cannot also be an input");
  }
}

// Runs of different kinds (a parameter-server run's roles beside engine runs) merge over the union
// of their columns: where a row lacks a number it holds NaN, a string "", and an integer column
// some row lacks becomes float64.
TEST_F(MergeMpi, RowsOfDifferentColumnsMergeOverTheirUnion) {
  const auto plain = write("plain.h5", "plain", 1);
  const auto number = write("number.h5", "number", 2, "extra");
  const auto text = write("text.h5", "text", 3, "label", kRunReport, std::string("ps"));
  const auto count = write("count.h5", "count", 4, "servers", kRunReport, std::int64_t{2});
  if (world.rank() != 0) return;
  merge_reports({plain, number, text, count}, dir / "all.h5", {{"schema_version", kReportSchemaVersion}});
  const ReportData merged = read_report(dir / "all.h5");
  ASSERT_EQ(merged.summary.size(), 4u);
  const std::vector<std::string> columns = {"run_id", "seed", "step_s", "extra", "label", "servers"};
  for (const auto& row : merged.summary) {
    ASSERT_EQ(row.size(), columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) EXPECT_EQ(row[c].name, columns[c]);
  }
  const auto& rows = merged.summary;
  EXPECT_TRUE(std::isnan(std::get<double>(rows[0][3].value)));
  EXPECT_EQ(std::get<double>(rows[1][3].value), 1.0);
  EXPECT_EQ(std::get<std::string>(rows[0][4].value), "");
  EXPECT_EQ(std::get<std::string>(rows[2][4].value), "ps");
  EXPECT_TRUE(std::isnan(std::get<double>(rows[0][5].value)));
  EXPECT_EQ(std::get<double>(rows[3][5].value), 2.0);
  EXPECT_EQ(std::get<std::int64_t>(rows[3][1].value), 4);  // every row has it: still int64
}

TEST_F(MergeMpi, KeepsTheInputsKindAndRefusesMixedKinds) {
  const auto run = write("run.h5", "run", 1);
  const auto first = write("first.h5", "c1", 2, "", kCollectivesReport);
  const auto second = write("second.h5", "c2", 3, "", kCollectivesReport);
  if (world.rank() != 0) return;
  EXPECT_EQ(read_report(run).kind(), "run") << "collect_run_metadata's default";
  EXPECT_EQ(merge_error({first, run, second}),
            "cannot merge reports of different kinds (root attribute report_kind): " + first.string() +
                " is a collectives report, " + run.string() + " a run report, " + second.string() +
                " a collectives report");
  EXPECT_EQ(
      merge_error({first, second}, {{"schema_version", kReportSchemaVersion}, {"report_kind", std::string("run")}}),
      (dir / "bad.h5").string() +
          ": the merged report was given report_kind \"run\", but its inputs are "
          "collectives reports");
  EXPECT_FALSE(fs::exists(dir / "bad.h5"));
  // Attributes that name no kind (or the first input's, as `embscale merge` passes) get the inputs'.
  merge_reports({first, second}, dir / "merged.h5", {{"schema_version", kReportSchemaVersion}});
  const auto merged = read_report(dir / "merged.h5");
  EXPECT_EQ(merged.kind(), "collectives");
  EXPECT_EQ(merged.runs.size(), 2u);
  merge_reports({dir / "merged.h5"}, dir / "again.h5", merged.attributes);
  EXPECT_EQ(read_report(dir / "again.h5").kind(), "collectives");
}

}  // namespace
}  // namespace embscale::report
