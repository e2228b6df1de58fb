// MappedArray: zero-filled pages in memory or in an unnamed file of a directory; a bad
// directory is an InputError naming it.
#include "kv/mapped_array.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "core/error.hpp"

namespace embscale::kv {
namespace {

TEST(MappedArray, MemoryAndFileBackedArraysStartZeroAndKeepWhatIsWritten) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  for (const std::string& where : {std::string(), dir}) {
    MappedArray a(1 << 20, where);
    EXPECT_EQ(a.file_backed(), !where.empty());
    ASSERT_EQ(a.size(), std::size_t{1} << 20);
    EXPECT_TRUE(std::all_of(a.data(), a.data() + a.size(), [](std::byte b) { return b == std::byte{0}; }));
    for (std::size_t i = 0; i < a.size(); i += 4093) a.data()[i] = static_cast<std::byte>(i % 251);
    MappedArray moved = std::move(a);
    for (std::size_t i = 0; i < moved.size(); i += 4093) ASSERT_EQ(moved.data()[i], static_cast<std::byte>(i % 251));
  }
}

TEST(MappedArray, AMissingDirectoryIsNamedInTheError) {
  try {
    MappedArray a(4096, "/nonexistent/embscale-rows");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/nonexistent/embscale-rows"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace embscale::kv
