#include "core/temp_files.hpp"

#include <gtest/gtest.h>

#include <fstream>

namespace embscale {
namespace {

TEST(TempFiles, CommitRenamesAndFatalPathRemovesTheRest) {
  const auto dir = std::filesystem::temp_directory_path() / "embscale_temp_files_test";
  std::filesystem::create_directories(dir);
  const auto kept = dir / "kept.h5";
  const auto lost = dir / "lost.h5";
  const auto kept_tmp = temporary_path_for(kept);
  const auto lost_tmp = temporary_path_for(lost);
  EXPECT_EQ(kept_tmp.parent_path(), dir);
  for (const auto& p : {kept_tmp, lost_tmp}) {
    std::ofstream(p) << "data";
    register_temp_file(p);
  }
  commit_temp_file(kept_tmp, kept);
  remove_registered_temp_files();
  EXPECT_TRUE(std::filesystem::exists(kept));
  EXPECT_FALSE(std::filesystem::exists(kept_tmp));
  EXPECT_FALSE(std::filesystem::exists(lost_tmp));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace embscale
