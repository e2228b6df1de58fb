// The sweep manifest: what it lists survives a reload, and a manifest that does not match its
// sweep or its files is refused with a message naming the manifest and the run.
#include <gtest/gtest.h>
#include <hdf5.h>
#include <unistd.h>

#include <fstream>

#include "core/error.hpp"
#include "sweep/manifest.hpp"

namespace embscale::sweep {
namespace {

class ManifestTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() / ("manifest_test_" + std::to_string(::getpid()) + "_" +
                                                     ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // The smallest file read_report accepts, written with HDF5's C API (not lib/report): the
  // schema version and one run group; and report_kind when `kind` is not empty.
  void write_report(const std::string& file, const std::string& run_id, const std::string& kind = "") const {
    const hid_t f = H5Fcreate((dir_ / file).c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t space = H5Screate(H5S_SCALAR);
    const hid_t attr = H5Acreate2(f, "schema_version", H5T_STD_I64LE, space, H5P_DEFAULT, H5P_DEFAULT);
    const std::int64_t version = 1;
    H5Awrite(attr, H5T_NATIVE_INT64, &version);
    if (!kind.empty()) {
      const hid_t text = H5Tcopy(H5T_C_S1);
      H5Tset_size(text, kind.size());
      H5Tset_strpad(text, H5T_STR_NULLPAD);  // as lib/report writes text
      const hid_t kind_attr = H5Acreate2(f, "report_kind", text, space, H5P_DEFAULT, H5P_DEFAULT);
      H5Awrite(kind_attr, text, kind.data());
      H5Aclose(kind_attr);
      H5Tclose(text);
    }
    const hid_t runs = H5Gcreate2(f, "runs", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    const hid_t run = H5Gcreate2(runs, run_id.c_str(), H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    H5Gclose(run);
    H5Gclose(runs);
    H5Aclose(attr);
    H5Sclose(space);
    H5Fclose(f);
  }

  std::string load_error(std::uint64_t digest, std::int64_t total) const {
    try {
      Manifest::load(dir_, digest, total);
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  }

  std::filesystem::path dir_;
};

TEST_F(ManifestTest, ListsFinishedRunsAcrossReloads) {
  auto manifest = Manifest::create(dir_, 0xabcULL, 4);
  EXPECT_TRUE(manifest.done().empty());
  write_report("p0.r0.h5", "p0.r0");
  write_report("p1.r0.h5", "p1.r0");
  manifest.mark_done({"p0.r0", "p0.r0.h5", "2026-11-22T10:00:00Z", "42"});
  manifest.mark_done({"p1.r0", "p1.r0.h5", "2026-11-22T10:00:01Z", ""});

  const auto loaded = Manifest::load(dir_, 0xabcULL, 4);
  ASSERT_EQ(loaded.done().size(), 2u);
  EXPECT_TRUE(loaded.is_done("p0.r0"));
  EXPECT_TRUE(loaded.is_done("p1.r0"));
  EXPECT_FALSE(loaded.is_done("p2.r0"));
  EXPECT_EQ(loaded.done()[0].slurm_job_id, "42");
  EXPECT_EQ(loaded.done()[1].finished_utc, "2026-11-22T10:00:01Z");
  // Written atomically: nothing but the manifest and the reports in the directory.
  std::size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir_)) files += entry.is_regular_file();
  EXPECT_EQ(files, 3u);
}

TEST_F(ManifestTest, RefusesAnotherSweep) {
  Manifest::create(dir_, 0xabcULL, 4);
  const auto name = Manifest::path_in(dir_).string();
  EXPECT_EQ(load_error(0xabdULL, 4)
                .rfind(name + ": written for another sweep (digest 0000000000000abc, 4 runs; this "
                              "sweep: 0000000000000abd, 4 runs)",
                       0),
            0u)
      << load_error(0xabdULL, 4);
  EXPECT_NE(load_error(0xabcULL, 6).find("written for another sweep"), std::string::npos);
}

TEST_F(ManifestTest, RefusesAManifestThatDoesNotMatchItsFiles) {
  auto manifest = Manifest::create(dir_, 1, 3);
  write_report("p0.r0.h5", "p0.r0");
  write_report("p1.r0.h5", "something_else");
  manifest.mark_done({"p0.r0", "p0.r0.h5", "t", ""});
  manifest.mark_done({"p1.r0", "p1.r0.h5", "t", ""});
  const auto name = Manifest::path_in(dir_).string();
  EXPECT_EQ(load_error(1, 3), name + ": lists run p1.r0 as done, but its report does not match: " +
                                  (dir_ / "p1.r0.h5").string() + ": holds no run p1.r0");
  std::filesystem::remove(dir_ / "p0.r0.h5");
  EXPECT_EQ(load_error(1, 3), name + ": lists run p0.r0 as done, but its report does not match: " +
                                  (dir_ / "p0.r0.h5").string() + ": no such report file");
}

TEST_F(ManifestTest, RefusesAPointReportOfAnotherKind) {
  auto manifest = Manifest::create(dir_, 1, 2);
  write_report("p0.r0.h5", "p0.r0", "run");
  write_report("p1.r0.h5", "p1.r0", "collectives");
  manifest.mark_done({"p0.r0", "p0.r0.h5", "2026-11-22T10:00:00Z", ""});
  EXPECT_EQ(load_error(1, 2), "") << "a run report is a sweep's point";
  manifest.mark_done({"p1.r0", "p1.r0.h5", "2026-11-22T10:00:01Z", ""});
  EXPECT_EQ(load_error(1, 2),
            Manifest::path_in(dir_).string() +
                ": lists run p1.r0 as done, but its report does not "
                "match: " +
                (dir_ / "p1.r0.h5").string() +
                ": a collectives report (root attribute report_kind); a sweep reads run reports only");
}

TEST_F(ManifestTest, RefusesACorruptManifest) {
  std::ofstream(Manifest::path_in(dir_)) << "{\"manifest_version\": 1, \"sweep_digest\": ";
  EXPECT_EQ(load_error(1, 1).rfind(Manifest::path_in(dir_).string() + ": not a valid manifest", 0), 0u);
  std::ofstream(Manifest::path_in(dir_))
      << R"({"manifest_version": 1, "sweep_digest": "0000000000000001", "runs_total": 1})";
  EXPECT_NE(load_error(1, 1).find("not a valid manifest"), std::string::npos) << load_error(1, 1);
}

}  // namespace
}  // namespace embscale::sweep
