// Where the device library is looked for: the order that lib/device/library_search.hpp
// documents, computed here from /proc/self/exe and the working directory independently.
#include "device/library_search.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "device/scoped_env.hpp"

namespace embscale::device {
namespace {

using embscale::testing::ScopedEnv;

TEST(LibrarySearch, TheVariableIsTheOnlyPlace) {
  ScopedEnv env(kLibraryVariable, "/opt/gpu/libembscale_cuda.so");
  const auto places = library_search_places();
  ASSERT_EQ(places.size(), 1u);
  EXPECT_EQ(places[0].path, "/opt/gpu/libembscale_cuda.so");
  EXPECT_EQ(places[0].description, "EMBSCALE_CUDA_LIBRARY=/opt/gpu/libembscale_cuda.so");
  EXPECT_NE(library_search_hint().find("Point EMBSCALE_CUDA_LIBRARY at"), std::string::npos);
}

TEST(LibrarySearch, ARelativeVariableMeansTheWorkingDirectoryNotTheLoadersSearch) {
  ScopedEnv env(kLibraryVariable, "libembscale_cuda.so");
  const auto places = library_search_places();
  ASSERT_EQ(places.size(), 1u);
  char cwd[4096];
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  EXPECT_EQ(places[0].path, std::string(cwd) + "/libembscale_cuda.so");
}

TEST(LibrarySearch, WithoutTheVariableExecutableFolderThenLibThenBuildTreeThenLoader) {
  for (const char* unset : {static_cast<const char*>(nullptr), ""}) {  // empty counts as unset
    ScopedEnv env(kLibraryVariable, unset);
    const auto places = library_search_places();
    const auto exe_dir = std::filesystem::read_symlink("/proc/self/exe").parent_path();
#ifdef EMBSCALE_TEST_CUDA_LIBRARY
    ASSERT_EQ(places.size(), 4u);
    EXPECT_EQ(places[2].path, EMBSCALE_TEST_CUDA_LIBRARY);
    EXPECT_EQ(places[2].description, std::string("the build tree's ") + EMBSCALE_TEST_CUDA_LIBRARY);
#else
    ASSERT_EQ(places.size(), 3u);
#endif
    EXPECT_EQ(places[0].path, (exe_dir / "libembscale_cuda.so").string());
    EXPECT_EQ(places[1].path, (exe_dir.parent_path() / "lib" / "libembscale_cuda.so").string());
    EXPECT_EQ(places.back().path, "libembscale_cuda.so");  // no '/': dlopen searches
    EXPECT_EQ(places.back().description, "the dynamic loader's search path");
    EXPECT_NE(library_search_hint().find("set EMBSCALE_CUDA_LIBRARY"), std::string::npos);
  }
}

}  // namespace
}  // namespace embscale::device
