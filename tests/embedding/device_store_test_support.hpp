// What the device row stores' tests share: the stand-in device library (tests/device: its "device"
// memory is host memory, its kernel families run the kernels' portable code in loops), host
// vectors put in its device memory, and a store's rows as bits.
#pragma once

#include <bit>
#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "../device/scoped_env.hpp"
#include "device/device_resources.hpp"
#include "embedding/row_store.hpp"

namespace embscale::embedding::testing {

inline device::DeviceLibrary fake_device() { return device::DeviceLibrary::open(EMBSCALE_TEST_FAKE_DEVICE); }

// The stand-in refuses host buffers where a GPU reads device memory (tests/device).
#define STRICT_DEVICE_MEMORY const embscale::testing::ScopedEnv strict_("EMBSCALE_FAKE_STRICT_DEVICE_MEMORY", "1")

inline const ExecutionContext kDevice = ExecutionContext::for_device(0, nullptr);

// A host vector in the stand-in's device memory.
template <class T> class OnDevice {
 public:
  OnDevice(const device::DeviceLibrary& library, const std::vector<T>& values)
      : buffer_(library, static_cast<std::int64_t>(values.size() * sizeof(T))), size_(values.size()) {
    buffer_.copy_from_host(values.data(), static_cast<std::int64_t>(values.size() * sizeof(T)), nullptr);
  }
  std::span<T> span() { return {static_cast<T*>(buffer_.data()), size_}; }
  std::vector<T> host() const {
    std::vector<T> out(size_);
    buffer_.copy_to_host(out.data(), static_cast<std::int64_t>(size_ * sizeof(T)), nullptr);
    return out;
  }

 private:
  device::DeviceBuffer buffer_;
  std::size_t size_;
};

// Every held row's embedding values, as bits, by key.
inline std::map<Key, std::vector<std::uint32_t>> bits_of(const RowStore& store) {
  std::map<Key, std::vector<std::uint32_t>> out;
  store.for_each_row([&](Key key, std::span<const float> row) {
    auto& bits = out[key];
    for (const float v : row) bits.push_back(std::bit_cast<std::uint32_t>(v));
  });
  return out;
}

}  // namespace embscale::embedding::testing
