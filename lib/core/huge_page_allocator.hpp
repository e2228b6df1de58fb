// HugePageAllocator: a std::allocator for large arrays read at random (hash tables, per-key
// counters), whose blocks of at least kHugePageMinBytes come from mmap aligned to 2 MiB with
// MADV_HUGEPAGE. Where transparent huge pages are "madvise" (this VM, Debian's default is
// "always" on some kernels, "madvise" on others), a std::vector's malloc'd block gets 4 KiB pages:
// a random access into tens of MiB then misses the TLB as well as the cache. Smaller blocks come
// from operator new. Advice only: without THP the memory is ordinary and results do not change.
#pragma once

#include <cstddef>
#include <new>
#include <vector>

namespace embscale {

inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;
inline constexpr std::size_t kHugePageMinBytes = std::size_t{1} << 20;

// Zero-filled for blocks of kHugePageMinBytes or more (fresh anonymous pages); throws
// std::bad_alloc when no memory can be had.
void* huge_page_allocate(std::size_t bytes);
void huge_page_deallocate(void* p, std::size_t bytes) noexcept;

template <typename T> struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() noexcept = default;
  template <typename U> HugePageAllocator(const HugePageAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > static_cast<std::size_t>(-1) / sizeof(T)) throw std::bad_array_new_length();
    return static_cast<T*>(huge_page_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { huge_page_deallocate(p, n * sizeof(T)); }

  template <typename U> bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};

template <typename T> using HugePageVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace embscale
