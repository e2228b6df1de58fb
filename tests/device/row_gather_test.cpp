// The row gather family from C++ (lib/device/row_gather.hpp) through the device seam: over the
// host-compiled fake library (fake_device_library.c) everywhere, and over the real
// libembscale_cuda.so when the build has CUDA: with a GPU its gather is compared with the CPU
// gather, without one it must say there is no device; a library whose row_gather family is of
// another version refuses the gather and nothing else.
#include "device/row_gather.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "embedding/row_gather.hpp"

namespace embscale::device {
namespace {

::testing::AssertionResult Contains(const std::string& text, const std::string& part) {
  if (text.find(part) != std::string::npos) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "\"" << text << "\" does not contain \"" << part << "\"";
}

struct GatherCase {
  static constexpr std::size_t kRows = 97, kDim = 7, kN = 300;
  std::vector<float> table = std::vector<float>(kRows * kDim);
  std::vector<std::int64_t> rows = std::vector<std::int64_t>(kN);
  std::vector<float> want = std::vector<float>(kN * kDim);

  GatherCase() {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<float> value(-1.0f, 1.0f);
    for (float& v : table) v = value(rng);
    for (auto& r : rows) r = static_cast<std::int64_t>(rng() % kRows);
    embscale::gather_rows(table.data(), kDim, rows, want.data());
  }
};

// The message of the Error that gathering `c` on `library` throws ("no error" when it throws none).
std::string gather_error(const DeviceLibrary& library, const GatherCase& c) {
  std::vector<float> got(c.want.size());
  try {
    gather_rows_host(library, c.table, GatherCase::kDim, c.rows, got);
  } catch (const Error& e) {
    return e.what();
  }
  return "no error";
}

// With a device: the CPU gather's result, and an out-of-range index named with the library's
// detail in the Error.
void expect_gather_and_bad_index(const DeviceLibrary& library) {
  GatherCase c;
  std::vector<float> got(c.want.size(), -7.0f);
  gather_rows_host(library, c.table, GatherCase::kDim, c.rows, got);
  EXPECT_EQ(got, c.want);

  c.rows[123] = static_cast<std::int64_t>(GatherCase::kRows);
  EXPECT_TRUE(Contains(gather_error(library, c), "CUDA row gather (" + library.path() +
                                                     "): row index out of range: rows[123] = 97 is outside [0, 97)"));
}

void expect_sizes_checked(const DeviceLibrary& library) {
  const std::vector<float> table(10);
  const std::vector<std::int64_t> rows{0, 1};
  std::vector<float> out(3);
  EXPECT_THROW(gather_rows_host(library, table, 5, rows, out), Error);  // out too small
  EXPECT_THROW(gather_rows_host(library, table, 3, rows, out), Error);  // 10 % 3 != 0
  EXPECT_THROW(gather_rows_host(library, table, 0, rows, out), Error);  // no columns
  // No rows: nothing to do, with or without a device.
  gather_rows_host(library, table, 5, std::span<const std::int64_t>(), std::span<float>());
}

TEST(RowGather, GatherThroughTheSeamMatchesTheCpuGather) {
  expect_gather_and_bad_index(DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE));
}

TEST(RowGather, GatherChecksItsSizesBeforeCallingTheLibrary) {
  expect_sizes_checked(DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE));
}

TEST(RowGather, ALibraryWithAnotherVersionOfTheFamilyLoadsButRefusesTheGather) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE_NEXT_ROW_GATHER);
  EXPECT_EQ(library.device_count(), 1);  // the core still works
  EXPECT_TRUE(Contains(gather_error(library, GatherCase()),
                       library.path() + ": kernel family row_gather: the library has version " +
                           std::to_string(EMBSCALE_CUDA_ROW_GATHER_VERSION + 1) + ", this embscale needs " +
                           std::to_string(EMBSCALE_CUDA_ROW_GATHER_VERSION)));
}

#ifdef EMBSCALE_TEST_CUDA_LIBRARY

TEST(RowGather, RealLibraryGathersLikeTheCpuOrSaysThereIsNoDevice) {
  const DeviceLibrary library = DeviceLibrary::open(EMBSCALE_TEST_CUDA_LIBRARY);
  expect_sizes_checked(library);
  if (library.device_count() > 0) {
    expect_gather_and_bad_index(library);
    return;
  }
  EXPECT_TRUE(Contains(gather_error(library, GatherCase()),
                       "CUDA row gather (" + library.path() + "): no CUDA device: cudaGetDeviceCount"));
}

#endif

}  // namespace
}  // namespace embscale::device
