// A tile: the lanes that probe one bucket together (a warp, or a part of one, on a GPU). The
// bucket logic (bucket_ref.hpp) is written against this interface, once, in tile-uniform style:
// every lane runs the same control flow, and per-lane work is a callable of the lane index that
// the tile evaluates for all its lanes. So the same source has two meanings:
//   * on the device (kernels/device_tile.cuh), each thread evaluates the callable for its own
//     lane and the tile combines the results with warp primitives (__ballot_sync, __shfl_sync);
//   * on the host (HostTile below), one thread evaluates it for every lane in turn, which is
//     what the GPU does when the callable reads only shared data and its lane index.
// The discipline that keeps both meanings equal: a callable may read memory and its lane index,
// not state another lane's callable writes; what crosses lanes goes through the tile.
//
// A Tile provides:
//   static constexpr unsigned kSize;                  lanes, a power of two <= 32
//   unsigned ballot(F&& lane_predicate) const;        bit l set when lane_predicate(l) holds
//   std::uint64_t min(F&& lane_value) const;         the least lane_value(l) over the lanes
//   std::uint64_t single(F&& once) const;            once() run by one lane, its result to all
//   void for_each_lane(F&& lane_work) const;         lane_work(l) for every lane (each thread its
//                                                    own on the device), then the tile in step
// Ballots of kSize <= 32 lanes fit an unsigned int; a GPU tile of 32 lanes is one warp.
#pragma once

#include <cstdint>

#include "kv/portable/host_device.hpp"

namespace embscale::kv::portable {

// The lowest set bit's index of a nonzero mask (__ffs(mask) - 1 on the device).
EMBSCALE_HD inline unsigned lowest_lane(unsigned mask) {
#if defined(__CUDA_ARCH__)
  return static_cast<unsigned>(__ffs(static_cast<int>(mask)) - 1);
#else
  return static_cast<unsigned>(__builtin_ctz(mask));
#endif
}

// The host's tile: one thread plays every lane in turn.
template <unsigned N> struct HostTile {
  static_assert(N >= 1 && N <= 32 && (N & (N - 1)) == 0, "a tile is a power of two of at most 32 lanes");
  static constexpr unsigned kSize = N;

  template <class LanePredicate> unsigned ballot(LanePredicate&& lane_predicate) const {
    unsigned mask = 0;
    for (unsigned lane = 0; lane < N; ++lane)
      if (lane_predicate(lane)) mask |= 1u << lane;
    return mask;
  }

  template <class LaneValue> std::uint64_t min(LaneValue&& lane_value) const {
    std::uint64_t least = lane_value(0u);
    for (unsigned lane = 1; lane < N; ++lane) {
      const std::uint64_t v = lane_value(lane);
      least = v < least ? v : least;
    }
    return least;
  }

  template <class Once> std::uint64_t single(Once&& once) const { return once(); }

  template <class LaneWork> void for_each_lane(LaneWork&& lane_work) const {
    for (unsigned lane = 0; lane < N; ++lane) lane_work(lane);
  }
};

}  // namespace embscale::kv::portable
