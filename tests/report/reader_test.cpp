#include "report/reader.hpp"

#include <gtest/gtest.h>
#include <hdf5.h>

#include <fstream>

#include "core/error.hpp"

namespace embscale::report {
namespace {

std::string error_of(const std::filesystem::path& path) {
  try {
    read_report(path);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

class ReaderErrors : public testing::Test {
 protected:
  void SetUp() override { std::filesystem::create_directories(dir); }
  void TearDown() override { std::filesystem::remove_all(dir); }
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "embscale_reader_test";
};

TEST_F(ReaderErrors, MissingFile) {
  EXPECT_EQ(error_of(dir / "none.h5"), (dir / "none.h5").string() + ": no such report file");
}

TEST_F(ReaderErrors, NotHdf5) {
  std::ofstream(dir / "text.h5") << "not an HDF5 file";
  EXPECT_EQ(error_of(dir / "text.h5"), (dir / "text.h5").string() + ": not an HDF5 file");
}

TEST_F(ReaderErrors, OtherSchemaVersionOrNone) {
  const auto path = dir / "v7.h5";
  const hid_t file = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  ASSERT_GE(file, 0);
  H5Fclose(file);
  EXPECT_EQ(error_of(path), path.string() + ": not an embscale report (no integer schema_version attribute)");

  const hid_t again = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t attr = H5Acreate2(again, "schema_version", H5T_NATIVE_INT64, space, H5P_DEFAULT, H5P_DEFAULT);
  const std::int64_t seven = 7;
  H5Awrite(attr, H5T_NATIVE_INT64, &seven);
  H5Aclose(attr);
  H5Sclose(space);
  H5Fclose(again);
  EXPECT_EQ(error_of(path), path.string() + ": report schema version 7, this embscale reads version 1");
}

}  // namespace
}  // namespace embscale::report
