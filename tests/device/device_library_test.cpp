// The loader of the device seam (lib/device/device_library.hpp) against host-compiled stand-ins
// for libembscale_cuda.so (fake_device_library.c, whole and broken), so that it is tested
// without CUDA; and, when the build has CUDA, against the real library (with or without a GPU).
#include "device/device_library.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "device/library_search.hpp"
#include "device/scoped_env.hpp"

namespace embscale::device {
namespace {

using embscale::testing::ScopedEnv;

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// The message of the embscale::Error that body throws ("" and a test failure when none).
template <typename Body> std::string error_of(Body&& body) {
  try {
    body();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no embscale::Error thrown";
  return "";
}

TEST(DeviceLibrary, MissingLibraryNamesThePathAndTheVariable) {
  const std::string bogus = "/nonexistent/embscale/libembscale_cuda.so";
  ScopedEnv env(kLibraryVariable, bogus.c_str());
  const std::string why = error_of([] { DeviceLibrary::load(); });
  EXPECT_TRUE(Contains(why,
                       "cannot load the CUDA library libembscale_cuda.so: "
                       "EMBSCALE_CUDA_LIBRARY=" +
                           bogus + ": no such file. "));
  EXPECT_TRUE(Contains(why, "Point EMBSCALE_CUDA_LIBRARY at a libembscale_cuda.so"));
}

TEST(DeviceLibrary, FileThatIsNotALibraryIsNamedWithTheLoadersReason) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("embscale_device_library_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = dir / "libembscale_cuda.so";
  std::ofstream(file) << "not an ELF file\n";
  ScopedEnv env(kLibraryVariable, file.c_str());
  const std::string why = error_of([] { DeviceLibrary::load(); });
  const std::string place = "EMBSCALE_CUDA_LIBRARY=" + file.string() + ": ";
  // dlopen's reason follows the place (its wording varies with the C library).
  const auto at = why.find(place), end = why.find(". Point EMBSCALE_CUDA_LIBRARY");
  ASSERT_NE(at, std::string::npos) << why;
  ASSERT_NE(end, std::string::npos) << why;
  EXPECT_GT(end, at + place.size()) << why;
  std::filesystem::remove_all(dir);
}

TEST(DeviceLibrary, LibraryLackingACoreFunctionNamesIt) {
  const std::string path = EMBSCALE_TEST_FAKE_DEVICE_LACKING_STREAM;
  const std::string why = error_of([&] { DeviceLibrary::open(path); });
  EXPECT_TRUE(Contains(why, "cannot load the device library " + path +
                                ": does not export embscale_cuda_stream_create (yet it "
                                "reports ABI version " +
                                std::to_string(EMBSCALE_CUDA_ABI_VERSION)));
  EXPECT_FALSE(Contains(why, "embscale_cuda_stream_destroy"));  // only what is missing
  // Found through the variable, the same reason.
  ScopedEnv env(kLibraryVariable, path.c_str());
  EXPECT_TRUE(Contains(error_of([] { DeviceLibrary::load(); }),
                       "EMBSCALE_CUDA_LIBRARY=" + path + ": does not export embscale_cuda_stream_create"));
}

// A family exported in part (a partial build) loads; only the family is refused, naming what it
// lacks, and the family's pointers stay null.
TEST(DeviceLibrary, LibraryLackingAFamilysFunctionRefusesThatFamilyOnly) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE_LACKING_ASYNC);
  EXPECT_EQ(library.device_count(), 1);
  const std::string& problem = library.family_problem(KernelFamily::row_gather);
  EXPECT_TRUE(Contains(problem, "does not export embscale_cuda_gather_rows_async (a partial build?)"));
  EXPECT_FALSE(Contains(problem, "embscale_cuda_gather_rows_host"));
  EXPECT_EQ(library.functions().gather_rows_host, nullptr);
  EXPECT_TRUE(Contains(error_of([&] { library.kernels(KernelFamily::row_gather); }),
                       library.path() + ": kernel family row_gather: the library does not export "
                                        "embscale_cuda_gather_rows_async"));
}

TEST(DeviceLibrary, LibraryWithoutTheVersionFunctionIsNotOurs) {
  const std::string path = EMBSCALE_TEST_FAKE_DEVICE_FOREIGN;
  EXPECT_TRUE(Contains(error_of([&] { DeviceLibrary::open(path); }),
                       path + ": does not export embscale_cuda_abi_version (not an embscale device "
                              "library?)"));
}

TEST(DeviceLibrary, LibraryOfAnotherAbiVersionIsRefusedBeforeItsFunctionsAreLookedUp) {
  const std::string path = EMBSCALE_TEST_FAKE_DEVICE_NEXT_ABI;
  EXPECT_TRUE(Contains(error_of([&] { DeviceLibrary::open(path); }),
                       path + ": ABI version " + std::to_string(EMBSCALE_CUDA_ABI_VERSION + 1) +
                           ", but this embscale needs " + std::to_string(EMBSCALE_CUDA_ABI_VERSION)));
}

TEST(DeviceLibrary, LoadsThroughTheVariableWithEveryFunctionResolved) {
  ScopedEnv env(kLibraryVariable, EMBSCALE_TEST_FAKE_DEVICE);
  const DeviceLibrary library = DeviceLibrary::load();
  EXPECT_EQ(library.path(), EMBSCALE_TEST_FAKE_DEVICE);
  EXPECT_EQ(library.abi_version(), EMBSCALE_CUDA_ABI_VERSION);
  const DeviceFunctions& fns = library.functions();
#define EMBSCALE_EXPECT_RESOLVED(name) EXPECT_NE(fns.name, nullptr) << #name;
#define EMBSCALE_EXPECT_FAMILY(family, version, functions)                \
  EXPECT_EQ(library.family_problem(KernelFamily::family), "") << #family; \
  EXPECT_EQ(&library.kernels(KernelFamily::family), &fns) << #family;     \
  functions(EMBSCALE_EXPECT_RESOLVED)
  EMBSCALE_DEVICE_CORE_FUNCTIONS(EMBSCALE_EXPECT_RESOLVED)
  EMBSCALE_DEVICE_KERNEL_FAMILIES(EMBSCALE_EXPECT_FAMILY)
#undef EMBSCALE_EXPECT_FAMILY
#undef EMBSCALE_EXPECT_RESOLVED
  // The fake's own values (no CUDA has them): the calls reached the loaded file.
  EXPECT_EQ(library.versions().runtime, 1234);
  EXPECT_EQ(library.versions().driver, 5678);
  EXPECT_EQ(library.device_count(), 1);
  // A copy calls the same library (the handle is never closed).
  const DeviceLibrary copy = library;
  EXPECT_EQ(copy.functions().gather_rows, fns.gather_rows);
}

TEST(DeviceLibrary, CheckTurnsACodeIntoAnErrorWithTheLibrarysDetail) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE);
  const std::vector<float> table{1, 2, 3, 4};  // 2 rows of 2
  const std::vector<std::int64_t> rows{1, 9, 0};
  std::vector<float> out(6, -1.0f);
  const int rc = library.functions().gather_rows_host(table.data(), 2, 2, rows.data(), 3, out.data());
  EXPECT_EQ(rc, EMBSCALE_CUDA_BAD_INDEX);
  EXPECT_EQ(out, (std::vector<float>{3, 4, 0, 0, 1, 2}));
  EXPECT_TRUE(Contains(error_of([&] { library.check(rc, "row gather"); }),
                       "row gather (" + library.path() + "): row index out of range: rows[1] = 9 is outside [0, 2)"));
  library.check(EMBSCALE_CUDA_OK, "nothing");  // no throw
  // After a call that succeeded the detail is empty: the code's text alone.
  EXPECT_EQ(library.device_count(), 1);
  EXPECT_EQ(library.describe(EMBSCALE_CUDA_NO_DEVICE), "no CUDA device");
}

#ifdef EMBSCALE_TEST_CUDA_LIBRARY

TEST(DeviceLibrary, LoadsTheBuiltLibraryAndReportsDevicesWithoutCrashing) {
  ScopedEnv env(kLibraryVariable, EMBSCALE_TEST_CUDA_LIBRARY);
  const DeviceLibrary library = DeviceLibrary::load();
  EXPECT_EQ(library.path(), EMBSCALE_TEST_CUDA_LIBRARY);
  EXPECT_EQ(library.abi_version(), EMBSCALE_CUDA_ABI_VERSION);
  EXPECT_GE(library.versions().runtime, 12000);  // built with CUDA 12 or later
  // Every family of this build, in this build's version.
  for (std::size_t f = 0; f < kKernelFamilies; ++f)
    EXPECT_EQ(library.family_problem(static_cast<KernelFamily>(f)), "") << family_name(static_cast<KernelFamily>(f));

  std::string why_none;
  const int devices = library.device_count(&why_none);
  EXPECT_GE(devices, 0);
  if (devices == 0) {
    EXPECT_TRUE(Contains(why_none, "no CUDA device"));
    EXPECT_TRUE(Contains(why_none, "cudaGetDeviceCount"));
  }
}

TEST(DeviceLibrary, FindsTheBuildTreeLibraryWithoutTheVariable) {
  ScopedEnv env(kLibraryVariable, nullptr);
  const DeviceLibrary library = DeviceLibrary::load();
  EXPECT_EQ(library.path(), EMBSCALE_TEST_CUDA_LIBRARY);
  EXPECT_EQ(library.abi_version(), EMBSCALE_CUDA_ABI_VERSION);
}

#else

// Built without CUDA: no place holds the library, and the message lists each and says how to
// get one.
TEST(DeviceLibrary, WithoutCudaEveryPlaceIsNamedWithHowToBuildTheLibrary) {
  ScopedEnv env(kLibraryVariable, nullptr);
  const std::string why = error_of([] { DeviceLibrary::load(); });
  for (const SearchPlace& place : library_search_places()) EXPECT_TRUE(Contains(why, place.description + ": "));
  EXPECT_TRUE(Contains(why, "Build embscale with CUDA"));
  EXPECT_TRUE(Contains(why, "set EMBSCALE_CUDA_LIBRARY to the library's path"));
}

#endif

}  // namespace
}  // namespace embscale::device
