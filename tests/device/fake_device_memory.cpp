/* Which host addresses are the stand-in library's "device" memory: every embscale_cuda_malloc is
 * recorded until its free, so that the stand-in's NCCL can refuse a host buffer as the real NCCL
 * would fault on one (with $EMBSCALE_FAKE_STRICT_DEVICE_MEMORY=1; the comm unit tests hand it
 * plain vectors and leave it off). */
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <mutex>

namespace {
std::mutex& lock() {
  static std::mutex m;
  return m;
}
std::map<std::uintptr_t, std::uint64_t>& allocations() {  // start -> bytes
  static std::map<std::uintptr_t, std::uint64_t> m;
  return m;
}
}  // namespace

extern "C" {

void embscale_fake_device_memory_add(std::uintptr_t address, std::uint64_t bytes) {
  const std::lock_guard<std::mutex> guard(lock());
  allocations()[address] = bytes;
}

void embscale_fake_device_memory_remove(const void* p) {
  const std::lock_guard<std::mutex> guard(lock());
  allocations().erase(reinterpret_cast<std::uintptr_t>(p));
}

/* With $EMBSCALE_FAKE_STRICT_DEVICE_MEMORY=1 (read per call: tests toggle it): 1 when [p, p + bytes)
 * lies inside one device allocation (or bytes is 0), else 0; without it, always 1. What the
 * stand-in's families check the buffers a real GPU would read on the device with. */
int embscale_fake_strict_device_memory(const void* p, std::uint64_t bytes);

/* 1 when [p, p + bytes) lies inside one device allocation (or bytes is 0), else 0. */
int embscale_fake_is_device_memory(const void* p, std::uint64_t bytes) {
  if (bytes == 0) return 1;
  const std::lock_guard<std::mutex> guard(lock());
  const auto at = reinterpret_cast<std::uintptr_t>(p);
  auto it = allocations().upper_bound(at);
  if (it == allocations().begin()) return 0;
  --it;
  return at + bytes <= it->first + it->second ? 1 : 0;
}

int embscale_fake_strict_device_memory(const void* p, std::uint64_t bytes) {
  const char* v = std::getenv("EMBSCALE_FAKE_STRICT_DEVICE_MEMORY");
  if (v == nullptr || std::strcmp(v, "1") != 0) return 1;
  return embscale_fake_is_device_memory(p, bytes);
}

}  // extern "C"
