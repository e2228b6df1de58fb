// The run-time loader of libembscale_cuda.so. Runs everywhere: without a GPU the library still
// loads and reports "no device"; with one, the gather is compared with the CPU gather.
#include "embedding/cuda_backend.hpp"

#include <gtest/gtest.h>
#include <link.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "embedding/row_gather.hpp"
#include "kernels/embscale_cuda_api.h"

namespace embscale::embedding {
namespace {

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

// Sets (or unsets, for nullptr) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr)
      ::setenv(name, value, 1);
    else
      ::unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      ::setenv(name_.c_str(), old_->c_str(), 1);
    else
      ::unsetenv(name_.c_str());
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

std::filesystem::path temp_dir() {
  auto dir = std::filesystem::temp_directory_path() /
             ("embscale_cuda_backend_test_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir;
}

// The path of a loaded shared object whose file name contains `part` ("" when none).
std::string loaded_library_path(const std::string& part) {
  struct Search {
    std::string part, found;
  } search{part, {}};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        const std::string name = info->dlpi_name != nullptr ? info->dlpi_name : "";
        if (!name.empty() && std::filesystem::path(name).filename().string().find(s->part) !=
                                 std::string::npos) {
          s->found = name;
          return 1;
        }
        return 0;
      },
      &search);
  return search.found;
}

TEST(CudaBackend, MissingLibraryNamedByEnvironmentIsExplained) {
  const std::string bogus = "/nonexistent/embscale/libembscale_cuda.so";
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", bogus.c_str());
  std::string why;
  EXPECT_FALSE(CudaBackend::load(&why).has_value());
  EXPECT_TRUE(Contains(why, "EMBSCALE_CUDA_LIBRARY=" + bogus + ": no such file"));
  EXPECT_TRUE(Contains(why, "cannot load the CUDA library libembscale_cuda.so"));
  EXPECT_FALSE(CudaBackend::load().has_value());  // why_not is optional
}

TEST(CudaBackend, FileThatIsNotALibraryIsExplained) {
  const auto file = temp_dir() / "libembscale_cuda.so";
  std::ofstream(file) << "not an ELF file\n";
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", file.c_str());
  std::string why;
  EXPECT_FALSE(CudaBackend::load(&why).has_value());
  EXPECT_TRUE(Contains(why, "EMBSCALE_CUDA_LIBRARY=" + file.string() + ": "));
  EXPECT_GT(why.size(), ("EMBSCALE_CUDA_LIBRARY=" + file.string() + ": ").size());
  std::filesystem::remove_all(file.parent_path());
}

TEST(CudaBackend, ForeignLibraryIsRefusedByItsMissingSymbols) {
  const std::string libc = loaded_library_path("libc.so");
  if (libc.empty()) GTEST_SKIP() << "no libc.so among the loaded objects (static build?)";
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", libc.c_str());
  std::string why;
  EXPECT_FALSE(CudaBackend::load(&why).has_value());
  EXPECT_TRUE(Contains(why, libc + ": does not export embscale_cuda_abi_version"));
}

#ifdef EMBSCALE_TEST_CUDA_LIBRARY

TEST(CudaBackend, LoadsTheBuiltLibraryAndReportsDevicesWithoutCrashing) {
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", EMBSCALE_TEST_CUDA_LIBRARY);
  std::string why;
  const auto backend = CudaBackend::load(&why);
  ASSERT_TRUE(backend.has_value()) << why;
  EXPECT_EQ(backend->path(), EMBSCALE_TEST_CUDA_LIBRARY);
  EXPECT_EQ(backend->abi_version(), EMBSCALE_CUDA_ABI_VERSION);
  EXPECT_GE(backend->versions().runtime, 12000);  // built with CUDA 12 or later

  std::string why_none;
  const int devices = backend->device_count(&why_none);
  EXPECT_GE(devices, 0);
  if (devices == 0) {
    EXPECT_TRUE(Contains(why_none, "no CUDA device"));
    EXPECT_TRUE(Contains(why_none, "cudaGetDeviceCount"));
  }
}

TEST(CudaBackend, FindsTheBuildTreeLibraryWithoutTheEnvironmentVariable) {
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", nullptr);
  std::string why;
  const auto backend = CudaBackend::load(&why);
  ASSERT_TRUE(backend.has_value()) << why;
  EXPECT_EQ(backend->abi_version(), EMBSCALE_CUDA_ABI_VERSION);
}

TEST(CudaBackend, GatherMatchesTheCpuGatherOrSaysThereIsNoDevice) {
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", EMBSCALE_TEST_CUDA_LIBRARY);
  std::string why;
  const auto backend = CudaBackend::load(&why);
  ASSERT_TRUE(backend.has_value()) << why;

  constexpr std::size_t kRows = 97, kDim = 7, kN = 300;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  std::vector<float> table(kRows * kDim);
  for (float& v : table) v = value(rng);
  std::vector<std::int64_t> rows(kN);
  for (auto& r : rows) r = static_cast<std::int64_t>(rng() % kRows);
  std::vector<float> got(kN * kDim, -7.0f), want(kN * kDim);
  embscale::gather_rows(table.data(), kDim, rows, want.data());

  if (backend->device_count() == 0) {
    try {
      backend->gather_rows_host(table, kDim, rows, got);
      FAIL() << "gather_rows_host ran without a device";
    } catch (const Error& e) {
      EXPECT_TRUE(Contains(std::string(e.what()), "no CUDA device"));
    }
    return;
  }
  backend->gather_rows_host(table, kDim, rows, got);
  EXPECT_EQ(got, want);

  rows[123] = static_cast<std::int64_t>(kRows);
  try {
    backend->gather_rows_host(table, kDim, rows, got);
    FAIL() << "an out-of-range index was not reported";
  } catch (const Error& e) {
    EXPECT_TRUE(Contains(std::string(e.what()), "rows[123] = 97 is outside [0, 97)"));
  }
}

TEST(CudaBackend, GatherChecksItsArgumentsBeforeCallingTheLibrary) {
  ScopedEnv env("EMBSCALE_CUDA_LIBRARY", EMBSCALE_TEST_CUDA_LIBRARY);
  std::string why;
  const auto backend = CudaBackend::load(&why);
  ASSERT_TRUE(backend.has_value()) << why;
  const std::vector<float> table(10);
  const std::vector<std::int64_t> rows{0, 1};
  std::vector<float> out(3);
  EXPECT_THROW(backend->gather_rows_host(table, 5, rows, out), Error);  // out too small
  EXPECT_THROW(backend->gather_rows_host(table, 3, rows, out), Error);  // 10 % 3 != 0
  // No rows: nothing to do, with or without a device.
  backend->gather_rows_host(table, 5, std::span<const std::int64_t>(), std::span<float>());
}

#else

TEST(CudaBackend, LoadsTheBuiltLibrary) {
  GTEST_SKIP() << "built without CUDA (no nvcc): libembscale_cuda.so was not built";
}

#endif

}  // namespace
}  // namespace embscale::embedding
