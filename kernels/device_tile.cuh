// The device's tile and atomics for the KV table's bucket logic (lib/kv/portable/bucket_ref.hpp,
// whose interface lib/kv/portable/tile.hpp states): a tile is N lanes of one warp
// (cooperative_groups::thread_block_tile<N>), each thread evaluating a lane callable for its own
// lane; ballots, minima and single-lane operations combine the lanes with warp primitives. The
// host's HostTile runs the same source with one thread playing every lane.
#pragma once

#include <cooperative_groups.h>

#include <cstdint>

#include "kv/portable/bucket_ref.hpp"

namespace embscale::kv::portable {

template <unsigned N>
struct DeviceTile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile is a power of two of at most 32 lanes");
  static constexpr unsigned kSize = N;

  __device__ explicit DeviceTile(cooperative_groups::thread_block_tile<N> tile) : group(tile) {}

  __device__ unsigned lane() const { return group.thread_rank(); }

  // Bit l set when lane l's predicate holds (the tile's own bits, lane 0 lowest).
  template <class LanePredicate>
  __device__ unsigned ballot(LanePredicate&& lane_predicate) const {
    return group.ballot(lane_predicate(lane()));
  }

  // The least of the lanes' values: a butterfly of shuffles, every lane ends with it.
  template <class LaneValue>
  __device__ std::uint64_t min(LaneValue&& lane_value) const {
    unsigned long long least = lane_value(lane());
    for (unsigned offset = N / 2; offset > 0; offset /= 2) {
      const unsigned long long other = group.shfl_xor(least, offset);
      least = other < least ? other : least;
    }
    return least;
  }

  // `once` run by lane 0 alone (a compare-and-swap, a counter's increment: made once per tile),
  // its result to all; what it wrote is seen by every lane after (the tile's sync orders memory).
  template <class Once>
  __device__ std::uint64_t single(Once&& once) const {
    unsigned long long result = 0;
    if (lane() == 0) result = once();
    group.sync();
    return group.shfl(result, 0);
  }

  // Each lane's share of the tile's work; the tile is in step again after it, so that what one
  // lane wrote the others read.
  template <class LaneWork>
  __device__ void for_each_lane(LaneWork&& lane_work) const {
    lane_work(lane());
    group.sync();
  }

  cooperative_groups::thread_block_tile<N> group;
};

struct DeviceAtomics {
  __device__ static std::uint64_t compare_and_swap(std::uint64_t* address, std::uint64_t expected,
                                                   std::uint64_t desired) {
    return atomicCAS(reinterpret_cast<unsigned long long*>(address), expected, desired);
  }
  // A relaxed load at device scope: it sees other warps' compare-and-swaps (never a value cached
  // in a register), without volatile's system scope.
  __device__ static std::uint64_t load(const std::uint64_t* address) {
    unsigned long long value;
    asm volatile("ld.relaxed.gpu.u64 %0, [%1];" : "=l"(value) : "l"(address) : "memory");
    return value;
  }
};

}  // namespace embscale::kv::portable
