// read_report without MPI: its errors, and files written by other tools (h5py writes int32,
// float32 and variable-length UTF-8 strings where embscale writes int64, float64 and fixed
// strings), tables among them.
#include "report/reader.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "report/metadata.hpp"

namespace embscale::report {
namespace {

std::string error_of(const std::filesystem::path& path) {
  try {
    read_report(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

class ReportReader : public testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("embscale_reader_test_" + std::to_string(getpid()));
};

// Scalar attributes through the C API, as another tool would write them: stored as `file_type`,
// `value` read as `memory_type`.
void scalar_attribute(hid_t object, const char* name, hid_t file_type, hid_t memory_type, const void* value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  ASSERT_GE(H5Awrite(attr, memory_type, value), 0);
  H5Aclose(attr);
  H5Sclose(space);
}

void int_attribute(hid_t object, const char* name, hid_t type, std::int64_t value) {
  scalar_attribute(object, name, type, H5T_NATIVE_INT64, &value);
}

// Variable-length, of character set `cset` (h5py writes UTF-8).
void vlen_string_attribute(hid_t object, const char* name, const char* value, H5T_cset_t cset = H5T_CSET_ASCII) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, cset);
  scalar_attribute(object, name, type, type, &value);
  H5Tclose(type);
}

TEST_F(ReportReader, MissingFile) {
  EXPECT_EQ(error_of(dir / "none.h5"), (dir / "none.h5").string() + ": no such report file");
}

TEST_F(ReportReader, ADirectoryIsNotAReport) { EXPECT_EQ(error_of(dir), dir.string() + ": not a file"); }

TEST_F(ReportReader, NotHdf5) {
  std::ofstream(dir / "text.h5") << "not an HDF5 file";
  EXPECT_EQ(error_of(dir / "text.h5"), (dir / "text.h5").string() + ": not an HDF5 file");
}

TEST_F(ReportReader, NoOrAnotherSchemaVersion) {
  const auto path = dir / "v7.h5";
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  vlen_string_attribute(file, "schema_version", "1");  // text is not a version
  H5Fclose(file);
  EXPECT_EQ(error_of(path), path.string() + ": not an embscale report (no integer schema_version attribute)");

  file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I32LE, 7);
  H5Fclose(file);
  EXPECT_EQ(error_of(path), path.string() + ": report schema version 7, this embscale reads version 1");
}

TEST_F(ReportReader, TheKindIsRunWithoutTheAttributeAndItsTextOtherwise) {
  const auto path = dir / "kind.h5";
  hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I64LE, kReportSchemaVersion);
  H5Fclose(file);
  EXPECT_EQ(read_report(path).kind(), "run") << "every report before the attribute was a run report";

  file = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  vlen_string_attribute(file, "report_kind", "collectives", H5T_CSET_UTF8);  // as h5py writes it
  H5Fclose(file);
  EXPECT_EQ(read_report(path).kind(), "collectives");

  file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I64LE, kReportSchemaVersion);
  int_attribute(file, "report_kind", H5T_STD_I64LE, 1);
  H5Fclose(file);
  EXPECT_EQ(error_of(path),
            path.string() + ": /: expected the attribute report_kind to be text (\"run\", \"collectives\")");
}

TEST_F(ReportReader, ADatasetOfTheWrongShapeNamesItsPlace) {
  const auto path = dir / "shape.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I64LE, kReportSchemaVersion);
  const hid_t make_parents = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(make_parents, 1);
  const hid_t timings = H5Gcreate2(file, "runs/r/timings", make_parents, H5P_DEFAULT, H5P_DEFAULT);
  H5Pclose(make_parents);
  const hsize_t n = 3;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t dataset = H5Dcreate2(timings, "lookup", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Gclose(timings);
  H5Fclose(file);
  EXPECT_EQ(error_of(path),
            path.string() + ": /runs/r/timings/lookup: expected a 2-D [iteration, rank] dataset, found 1 dimensions");
}

// A report whose run r holds one dataset at `inside` ("eviction/hit_rate") of `type` and extent
// `dims`, values 0, 1, 2, ..., with a text attribute `columns` unless `columns` is null.
hid_t file_with_dataset(const std::filesystem::path& path, const std::string& inside, hid_t type,
                        std::vector<hsize_t> dims, const char* columns) {
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I64LE, kReportSchemaVersion);
  const hid_t make_parents = H5Pcreate(H5P_LINK_CREATE);
  H5Pset_create_intermediate_group(make_parents, 1);
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const std::string where = "runs/r/" + inside;
  const hid_t dataset = H5Dcreate2(file, where.c_str(), type, space, make_parents, H5P_DEFAULT, H5P_DEFAULT);
  std::vector<double> values(static_cast<std::size_t>(H5Sget_simple_extent_npoints(space)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  if (!values.empty()) H5Dwrite(dataset, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, values.data());
  if (columns) vlen_string_attribute(dataset, "columns", columns);
  H5Dclose(dataset);
  H5Sclose(space);
  H5Pclose(make_parents);
  return file;
}

TEST_F(ReportReader, ReadsATableOfAnotherTool) {
  const auto path = dir / "table.h5";
  // float32, no columns attribute (h5py's default float is float64; numpy's float32 stays so).
  hid_t file = file_with_dataset(path, "eviction/hit_rate", H5T_IEEE_F32LE, {2, 3}, nullptr);
  // A dataset directly in the run group is no table (the schema has none there): passed over.
  const hsize_t one = 1;
  const hid_t space = H5Screate_simple(1, &one, nullptr);
  H5Dclose(H5Dcreate2(file, "runs/r/stray", H5T_IEEE_F64LE, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Sclose(space);
  H5Fclose(file);
  const ReportData data = read_report(path);
  ASSERT_EQ(data.runs.size(), 1u);
  ASSERT_EQ(data.runs[0].tables.size(), 1u);
  const ReportTable& table = data.runs[0].tables.at("eviction/hit_rate");
  EXPECT_EQ(table.columns, (std::vector<std::string>{"column 0", "column 1", "column 2"}));
  EXPECT_EQ(table.values, (std::vector<double>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(table.rows(), 2u);
  EXPECT_EQ(table(1, 0), 3.0);
  EXPECT_EQ(table.meaning, "");

  H5Fclose(file_with_dataset(path, "curves/miss_ratio", H5T_IEEE_F64LE, {1, 2}, "capacity,miss ratio"));
  EXPECT_EQ(read_report(path).runs[0].tables.at("curves/miss_ratio").columns,
            (std::vector<std::string>{"capacity", "miss ratio"}));
}

TEST_F(ReportReader, ATableOfAnotherShapeOrTypeNamesFileAndDataset) {
  const auto path = dir / "bad_table.h5";
  const std::string at = path.string() + ": /runs/r/eviction/";
  H5Fclose(file_with_dataset(path, "eviction/steps", H5T_IEEE_F64LE, {4}, nullptr));
  EXPECT_EQ(error_of(path), at + "steps: expected a 2-D float64 [row, column] table, found 1 dimensions");
  H5Fclose(file_with_dataset(path, "eviction/counts", H5T_STD_I64LE, {2, 2}, nullptr));
  EXPECT_EQ(error_of(path), at + "counts: expected a 2-D float64 [row, column] table, found a dataset of another "
                                 "type than float");
  H5Fclose(file_with_dataset(path, "eviction/nested/t", H5T_IEEE_F64LE, {2, 2}, nullptr));
  EXPECT_EQ(error_of(path), at + "nested: expected a 2-D float64 [row, column] table, found a group");
  H5Fclose(file_with_dataset(path, "eviction/t", H5T_IEEE_F64LE, {2, 3}, "a,b"));
  EXPECT_EQ(error_of(path), at + "t: the attribute columns names 2 columns, the dataset has 3");
  H5Fclose(file_with_dataset(path, "eviction/t", H5T_IEEE_F64LE, {2, 0}, nullptr));
  EXPECT_EQ(error_of(path), at + "t: expected a 2-D float64 [row, column] table, found one with no columns");
  const hid_t file = file_with_dataset(path, "eviction/t", H5T_IEEE_F64LE, {1, 1}, nullptr);
  const hid_t dataset = H5Dopen2(file, "runs/r/eviction/t", H5P_DEFAULT);
  int_attribute(dataset, "meaning", H5T_STD_I64LE, 3);
  H5Dclose(dataset);
  H5Fclose(file);
  EXPECT_EQ(error_of(path), at + "t: expected the attribute meaning to be text");
}

TEST_F(ReportReader, ReadsOtherToolsTypes) {
  const auto path = dir / "h5py_like.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I32LE, kReportSchemaVersion);
  // UTF-8, as h5py writes text, and the first variable-length string the reader converts: HDF5
  // 1.10 reuses that conversion path for either character set afterwards, so a later one would
  // pass even if the reader did not ask for the file's character set.
  vlen_string_attribute(file, "note", "µs, written by h5py", H5T_CSET_UTF8);
  // /summary {run_id: variable-length UTF-8 string, ranks: int32, step: float32, label: char[8] ASCII}
  struct Row {
    const char* run_id;
    std::int32_t ranks;
    float step;
    char label[8];
  };
  Row rows[2] = {{"first", 2, 0.5f, "x"}, {"second", 4, 0.25f, {}}};
  std::memcpy(rows[1].label, "8 chars!", 8);  // fills the field: no NUL
  const hid_t label = H5Tcopy(H5T_C_S1);
  H5Tset_size(label, 8);
  H5Tset_strpad(label, H5T_STR_NULLPAD);
  const hid_t text = H5Tcopy(H5T_C_S1);
  H5Tset_size(text, H5T_VARIABLE);
  H5Tset_cset(text, H5T_CSET_UTF8);
  const hid_t record = H5Tcreate(H5T_COMPOUND, sizeof(Row));
  H5Tinsert(record, "run_id", offsetof(Row, run_id), text);
  H5Tinsert(record, "ranks", offsetof(Row, ranks), H5T_NATIVE_INT32);
  H5Tinsert(record, "step", offsetof(Row, step), H5T_NATIVE_FLOAT);
  H5Tinsert(record, "label", offsetof(Row, label), label);
  const hsize_t n = 2;
  const hid_t space = H5Screate_simple(1, &n, nullptr);
  const hid_t summary = H5Dcreate2(file, "summary", record, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(H5Dwrite(summary, record, H5S_ALL, H5S_ALL, H5P_DEFAULT, rows), 0);
  H5Dclose(summary);
  H5Sclose(space);
  H5Tclose(record);
  H5Tclose(text);
  H5Tclose(label);
  H5Fclose(file);

  const ReportData data = read_report(path);
  EXPECT_EQ(std::get<std::int64_t>(data.attributes.at("schema_version")), kReportSchemaVersion);
  EXPECT_EQ(std::get<std::string>(data.attributes.at("note")), "µs, written by h5py");
  ASSERT_EQ(data.summary.size(), 2u);
  ASSERT_EQ(data.summary[1].size(), 4u);
  EXPECT_EQ(data.summary[1][0].name, "run_id");
  EXPECT_EQ(std::get<std::string>(data.summary[1][0].value), "second");
  EXPECT_EQ(std::get<std::int64_t>(data.summary[1][1].value), 4);
  EXPECT_EQ(std::get<double>(data.summary[1][2].value), 0.25);
  EXPECT_EQ(std::get<std::string>(data.summary[0][3].value), "x");
  EXPECT_EQ(std::get<std::string>(data.summary[1][3].value), "8 chars!");
  EXPECT_TRUE(data.runs.empty());
}

// Every input the report reader's fuzzer found (fuzz/regressions/report_reader/) is refused as a
// damaged file, not a crash: the first made HDF5 1.10 free a wild pointer inside H5Literate, which
// the reader now meets in a child process.
TEST_F(ReportReader, DamagedFilesThatCrashHdf5AreRefused) {
  const std::filesystem::path regressions = EMBSCALE_SOURCE_DIR "/fuzz/regressions/report_reader";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(regressions)) {
    const std::string message = error_of(entry.path());
    EXPECT_TRUE(message.starts_with(entry.path().string() + ": ")) << message;
    ++files;
  }
  EXPECT_GE(files, 1);
  // The one that crashed HDF5 says so.
  const auto crashed = regressions / "crash-4feef9302be695bb14963bf10dad1c8b52fe4733";
  EXPECT_EQ(error_of(crashed), crashed.string() +
                                   ": the file is damaged: HDF5 failed reading it (signal Segmentation fault); it is "
                                   "not a report embscale can read");
}

}  // namespace
}  // namespace embscale::report
