#include "core/huge_page_allocator.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

namespace embscale {
namespace {

TEST(HugePageAllocator, LargeBlocksAreAlignedToHugePagesAndZeroed) {
  for (const std::size_t bytes : {kHugePageMinBytes, kHugePageBytes, 3 * kHugePageBytes + 12345}) {
    auto* p = static_cast<unsigned char*>(huge_page_allocate(bytes));
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p) % kHugePageBytes, 0u) << bytes;
    std::size_t nonzero = 0;
    for (std::size_t i = 0; i < bytes; i += 4096) nonzero += p[i] != 0;
    EXPECT_EQ(nonzero, 0u) << bytes;
    p[0] = 1;
    p[bytes - 1] = 2;  // the whole block is writable
    huge_page_deallocate(p, bytes);
  }
}

TEST(HugePageAllocator, SmallBlocksComeFromOperatorNew) {
  void* p = huge_page_allocate(100);
  ASSERT_NE(p, nullptr);
  huge_page_deallocate(p, 100);
  huge_page_deallocate(nullptr, 100);  // as delete of nullptr
}

TEST(HugePageAllocator, VectorsGrowAcrossTheThresholdKeepingTheirValues) {
  HugePageVector<std::uint64_t> v;
  for (std::uint64_t i = 0; i < (kHugePageBytes / sizeof(std::uint64_t)) + 1000; ++i) v.push_back(i * 3);
  std::uint64_t wrong = 0;
  for (std::uint64_t i = 0; i < v.size(); ++i) wrong += v[i] != i * 3;
  EXPECT_EQ(wrong, 0u);
  HugePageVector<std::uint64_t> copy = v;
  EXPECT_EQ(copy, v);
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(copy.back(), 3 * (copy.size() - 1));
}

}  // namespace
}  // namespace embscale
