// read_report without MPI: its errors, and files written by other tools (h5py writes int32,
// float32 and variable-length strings where embscale writes int64, float64 and fixed strings).
#include "report/reader.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <cstring>
#include <fstream>

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

// Scalar attributes through the C API, as another tool would write them.
void int_attribute(hid_t object, const char* name, hid_t type, std::int64_t value) {
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  ASSERT_GE(H5Awrite(attr, H5T_NATIVE_INT64, &value), 0);
  H5Aclose(attr);
  H5Sclose(space);
}

void vlen_string_attribute(hid_t object, const char* name, const char* value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(attr, 0);
  ASSERT_GE(H5Awrite(attr, type, &value), 0);
  H5Aclose(attr);
  H5Sclose(space);
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
  EXPECT_EQ(error_of(path), path.string() +
                                ": /runs/r/timings/lookup: expected a 2-D [iteration, rank] dataset, found 1 dimensions");
}

TEST_F(ReportReader, ReadsOtherToolsTypes) {
  const auto path = dir / "h5py_like.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  int_attribute(file, "schema_version", H5T_STD_I32LE, kReportSchemaVersion);
  vlen_string_attribute(file, "note", "written by h5py");
  // /summary {run_id: variable-length string, ranks: int32, step: float32, label: char[8] ASCII}
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
  EXPECT_EQ(std::get<std::string>(data.attributes.at("note")), "written by h5py");
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

}  // namespace
}  // namespace embscale::report
