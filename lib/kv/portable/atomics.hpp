// The one atomic operation the bucket logic needs, on the host: compare-and-swap of a slot's key
// (std::atomic_ref over the plain array, so the table's arrays stay plain uint64 for both
// compilers). The device's is kernels/device_tile.cuh's DeviceAtomics (atomicCAS).
#pragma once

#include <atomic>
#include <cstdint>

namespace embscale::kv::portable {

struct HostAtomics {
  // Sets *address to `desired` when it holds `expected`; returns what it held before.
  static std::uint64_t compare_and_swap(std::uint64_t* address, std::uint64_t expected, std::uint64_t desired) {
    std::atomic_ref<std::uint64_t> slot(*address);
    slot.compare_exchange_strong(expected, desired, std::memory_order_acq_rel, std::memory_order_acquire);
    return expected;  // on failure compare_exchange_strong stored the value it found
  }
  static std::uint64_t load(const std::uint64_t* address) {
    return std::atomic_ref<std::uint64_t>(*const_cast<std::uint64_t*>(address)).load(std::memory_order_acquire);
  }
};

}  // namespace embscale::kv::portable
