// A run's tables (RunRecord::tables, /runs/<id>/<group>/<name>) written by ReportWriter at 1, 2
// and 4 ranks and read back: values, columns and meanings exactly; the HDF5 layout results/
// schema.md promises (float64 [row, column], chunked and deflated, text attributes) checked
// through the C API and through h5py; refused keys and tables; ranks that disagree on a table
// all failing instead of hanging.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <mpi.h>
#include <spawn.h>
#include <sys/wait.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "comm/mpi_communicator.hpp"
#include "core/error.hpp"
#include "report/metadata.hpp"
#include "report/reader.hpp"
#include "report/writer.hpp"
#include "shared_directory.hpp"

extern char** environ;

namespace embscale::report {
namespace {

namespace fs = std::filesystem;

class TableMpi : public testing::SharedDirectoryTest {
 protected:
  TableMpi() : SharedDirectoryTest("embscale_table_mpi_") {}
  RunMetadata minimal_metadata() const { return {{{"schema_version", kReportSchemaVersion}}}; }
};

// rows x columns, value(r, c) = r + c / 8 + offset: every cell distinct and exact in binary.
ReportTable known_table(std::vector<std::string> columns, std::size_t rows, double offset, std::string meaning = "") {
  ReportTable table{std::move(columns), {}, std::move(meaning)};
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < table.columns.size(); ++c)
      table.values.push_back(static_cast<double>(r) + static_cast<double>(c) / 8 + offset);
  return table;
}

// Two groups, an empty table and a table of 70,000 rows (several 1 MiB chunks of 2 columns).
std::map<std::string, ReportTable> known_tables() {
  return {{"eviction/hit_rate", known_table({"step", "table", "lru", "lfu", "opt"}, 6, 0.0,
                                            "hit rate per step of the table and of each oracle")},
          {"eviction/recall", known_table({"step", "retention", "hot_keys"}, 4, 100.0)},
          {"eviction/empty", known_table({"step", "evictions"}, 0, 0.0, "nothing recorded")},
          {"caching/curve", known_table({"capacity", "hit_rate"}, 70'000, -1.0)}};
}

RunRecord run_with(std::map<std::string, ReportTable> tables, int rank) {
  RunRecord run;
  run.id = "r";
  run.phase_names = {"a"};
  run.timings["a"] = {1.0 + rank, 2.0};
  run.series["loss"] = {0.5, 0.25};
  run.tables = std::move(tables);
  return run;
}

// The dataset's storage through the C API: chunked with deflate when it holds values.
void expect_chunked_and_deflated(const fs::path& path, const char* dataset_path, bool expected) {
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  const hid_t dataset = H5Dopen2(file, dataset_path, H5P_DEFAULT);
  ASSERT_GE(dataset, 0) << dataset_path;
  const hid_t type = H5Dget_type(dataset);
  EXPECT_TRUE(H5Tequal(type, H5T_IEEE_F64LE) > 0) << dataset_path << " is float64";
  const hid_t create = H5Dget_create_plist(dataset);
  EXPECT_EQ(H5Pget_layout(create) == H5D_CHUNKED, expected) << dataset_path;
  EXPECT_EQ(H5Pget_filter_by_id2(create, H5Z_FILTER_DEFLATE, nullptr, nullptr, nullptr, 0, nullptr, nullptr) >= 0,
            expected)
      << dataset_path;
  H5Eclear2(H5E_DEFAULT);
  H5Pclose(create);
  H5Tclose(type);
  H5Dclose(dataset);
  H5Fclose(file);
}

// Runs Debian's python3 (which has h5py, scripts/setup) on `script` with `path` as argv[1]; its
// exit status, or -1 when it could not start.
int python(const std::string& script, const fs::path& path) {
  std::vector<std::string> args{"/usr/bin/python3", "-c", script, path.string()};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST_F(TableMpi, TablesInSeveralGroupsReadBackExactly) {
  const auto path = dir / "tables.h5";
  {
    ReportWriter writer(world, path, minimal_metadata());
    writer.write_run(run_with(known_tables(), world.rank()));
    RunRecord plain = run_with({}, world.rank());
    plain.id = "no_tables";
    writer.write_run(plain);
    writer.commit();
  }
  if (world.rank() != 0) return;
  const ReportData data = read_report(path);
  const auto& tables = data.find_run("r")->tables;
  EXPECT_EQ(tables, known_tables()) << "names, columns, values and meanings";
  EXPECT_EQ(tables.at("eviction/empty").rows(), 0u);
  EXPECT_EQ(tables.at("eviction/hit_rate")(5, 4), 5.5);
  EXPECT_EQ(tables.at("caching/curve").rows(), 70'000u);
  EXPECT_TRUE(data.find_run("no_tables")->tables.empty());
  EXPECT_EQ(data.find_run("r")->series.at("loss"), (std::vector<double>{0.5, 0.25})) << "the rest of the run intact";
  expect_chunked_and_deflated(path, "/runs/r/eviction/hit_rate", true);
  expect_chunked_and_deflated(path, "/runs/r/caching/curve", true);
  expect_chunked_and_deflated(path, "/runs/r/eviction/empty", false);
}

TEST_F(TableMpi, H5pyReadsATableAsTheSchemaSays) {
  const auto path = dir / "h5py.h5";
  {
    ReportWriter writer(world, path, minimal_metadata());
    writer.write_run(run_with(known_tables(), world.rank()));
    writer.commit();
  }
  if (world.rank() != 0) return;
  if (python("import h5py", path) != 0) GTEST_SKIP() << "/usr/bin/python3 has no h5py";
  // Exit 0 only when every property holds; the failing assertion is printed to stderr.
  const std::string script = R"(
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
d = f["runs/r/eviction/hit_rate"]
assert d.dtype == np.float64 and d.shape == (6, 5), (d.dtype, d.shape)
assert d.attrs["columns"].decode() == "step,table,lru,lfu,opt", d.attrs["columns"]
assert d.attrs["meaning"].decode() == "hit rate per step of the table and of each oracle"
expected = np.arange(6)[:, None] + np.arange(5)[None, :] / 8
assert (d[()] == expected).all(), d[()]
assert "meaning" not in f["runs/r/eviction/recall"].attrs
assert f["runs/r/eviction/empty"].shape == (0, 2)
assert sorted(f["runs/r"]) == ["caching", "counters", "eviction", "series", "timings"], list(f["runs/r"])
)";
  EXPECT_EQ(python(script, path), 0) << "h5py's view of " << path << " (its assertion is printed above)";
}

TEST_F(TableMpi, RefusesBadKeysAndTablesOnEveryRank) {
  ReportWriter writer(world, dir / "refused.h5", minimal_metadata());
  const auto refusal = [&](const std::string& key, const ReportTable& table) {
    try {
      writer.write_run(run_with({{key, table}}, world.rank()));
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("(no throw)");
  };
  const std::string prefix = (dir / "refused.h5").string() + ": run r: ";
  const ReportTable good = known_table({"x", "y"}, 2, 0.0);
  for (const std::string key : {"hit_rate", "eviction/", "/hit_rate", "a/b/c", ""})
    EXPECT_EQ(refusal(key, good), prefix + "table \"" + key + "\" is not named <group>/<name> (two non-empty parts)");
  EXPECT_EQ(refusal("./x", good), prefix + "table group \".\" contains '/' or is \".\"");
  for (const std::string group : {"timings", "counters", "series", "metadata", "timings_summary", "counters_summary"})
    EXPECT_EQ(refusal(group + "/x", good), prefix + "table " + group + "/x: the group " + group +
                                               " is reserved (timings, counters, series, "
                                               "metadata, timings_summary and counters_summary hold no tables)");
  EXPECT_EQ(refusal("e/t", ReportTable{}), prefix + "table e/t has no columns");
  EXPECT_EQ(refusal("e/t", known_table({"a,b", "c"}, 1, 0.0)),
            prefix + "table e/t: column name \"a,b\" is empty or contains ','");
  EXPECT_EQ(refusal("e/t", known_table({"a", ""}, 1, 0.0)),
            prefix + "table e/t: column name \"\" is empty or contains ','");
  ReportTable ragged = good;
  ragged.values.push_back(1.0);
  EXPECT_EQ(refusal("e/t", ragged), prefix + "table e/t: 5 values do not fill rows of 2 columns");
  EXPECT_EQ(refusal("e/t", known_table({"a"}, 1, 0.0, "two\nlines")),
            prefix + "table e/t: the meaning is more than one line");
  // Nothing was created: the same run id is still free.
  writer.write_run(run_with({{"e/t", good}}, world.rank()));
  writer.commit();
}

TEST_F(TableMpi, RanksThatDisagreeOnATableAllThrowInsteadOfHanging) {
  if (world.size() < 2) GTEST_SKIP() << "needs >= 2 ranks";
  const auto path = dir / "disagree.h5";
  const bool odd = world.rank() == 1;
  {
    ReportWriter writer(world, path, minimal_metadata());
    const auto expect_disagreement = [&](const std::map<std::string, ReportTable>& tables, const char* what) {
      try {
        writer.write_run(run_with(tables, world.rank()));
        ADD_FAILURE() << "no throw when the ranks disagree on " << what;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("run r differs between ranks"), std::string::npos) << e.what();
      }
    };
    expect_disagreement({{"e/t", known_table({"x", odd ? "z" : "y"}, 3, 0.0)}}, "a column's name");
    const std::vector<std::string> columns = odd ? std::vector<std::string>{"x"} : std::vector<std::string>{"x", "y"};
    expect_disagreement({{"e/t", known_table(columns, 2, 0.0)}}, "the number of columns");
    expect_disagreement({{"e/t", known_table({"x", "y"}, odd ? 4 : 3, 0.0)}}, "the rows");
    expect_disagreement({{"e/t", known_table({"x", "y"}, 3, 0.0, odd ? "other" : "")}}, "the meaning");
    expect_disagreement({{odd ? "e/u" : "e/t", known_table({"x"}, 1, 0.0)}}, "the name");
    // Values may differ (rank 0's are written, as for series): no check, no hang.
    writer.write_run(run_with({{"e/t", known_table({"x"}, 2, odd ? 7.0 : 0.0)}}, world.rank()));
    writer.commit();
  }
  if (world.rank() != 0) return;
  EXPECT_EQ(read_report(path).runs.at(0).tables.at("e/t"), known_table({"x"}, 2, 0.0));
}

}  // namespace
}  // namespace embscale::report
