#include "core/huge_page_allocator.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace embscale {
namespace {

std::size_t mapped_bytes(std::size_t bytes) { return (bytes + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes; }

}  // namespace

void* huge_page_allocate(std::size_t bytes) {
  if (bytes < kHugePageMinBytes) return ::operator new(bytes);
  // Map one huge page more than needed, then unmap the ends so that what stays starts on a 2 MiB
  // boundary (mmap promises only 4 KiB): every 2 MiB of it can be one huge page.
  const std::size_t size = mapped_bytes(bytes);
  void* raw = ::mmap(nullptr, size + kHugePageBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) throw std::bad_alloc();
  const auto start = reinterpret_cast<std::uintptr_t>(raw);
  const std::uintptr_t aligned = (start + kHugePageBytes - 1) / kHugePageBytes * kHugePageBytes;
  if (aligned > start) ::munmap(raw, aligned - start);
  const std::uintptr_t end = start + size + kHugePageBytes;
  if (end > aligned + size) ::munmap(reinterpret_cast<void*>(aligned + size), end - (aligned + size));
  void* p = reinterpret_cast<void*>(aligned);
  ::madvise(p, size, MADV_HUGEPAGE);  // advice: failure (no THP) changes nothing
  return p;
}

void huge_page_deallocate(void* p, std::size_t bytes) noexcept {
  if (p == nullptr) return;
  if (bytes < kHugePageMinBytes) {
    ::operator delete(p);
    return;
  }
  ::munmap(p, mapped_bytes(bytes));
}

}  // namespace embscale
