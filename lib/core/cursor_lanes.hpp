// Counter-based draws for many cursors at once, laid out for SIMD: a pass copies up to kLanes
// cursors' (seed, stream, counter) into arrays (structure of arrays), a vectorized loop computes
// each lane's next Philox block and whatever follows from it, and the cursors move past the draw.
// A lane's values are the ones the cursor's own next draw gives (RngCursor), bit for bit.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>

#include "core/rng.hpp"
#include "core/simd_level.hpp"

namespace embscale {

struct CursorLanes {
  static constexpr std::size_t kLanes = 256;  // enough for SIMD and pipelines, small enough for L1

  std::array<std::uint64_t, kLanes> seeds, streams, counters;
  std::array<std::uint64_t, kLanes> bits;  // after draw_bits: each lane's 64 random bits

  // Lanes 0 .. cursors.size() - 1 (at most kLanes) take the cursors' next draws.
  void load(std::span<const RngCursor> cursors) noexcept {
    for (std::size_t i = 0; i < cursors.size(); ++i) {
      seeds[i] = cursors[i].rng().seed();
      streams[i] = cursors[i].rng().stream();
      counters[i] = cursors[i].counter();
    }
  }

  // bits[i] = CounterRng(seeds[i], streams[i]).bits64(counters[i]) for i < count: Philox4x32-10
  // in SIMD registers at `level` (AVX-512: 8 lanes a register, AVX2: 4, with the 32 x 32 -> 64-bit
  // multiply these have; a compiler's own vectorization of Philox picks a slower 64-bit multiply).
  void draw_bits(std::size_t count, SimdLevel level) noexcept;

  // The uniform in [0, 1) of lane i's draw (CounterRng::uniform's value), after draw_bits.
  EMBSCALE_ALWAYS_INLINE double uniform(std::size_t i) const noexcept { return CounterRng::unit_interval(bits[i]); }
};

// uniforms[i] = cursors[i].uniform() for every i (each cursor moves one draw on), computed in
// SIMD lanes at `level`.
void draw_uniforms(std::span<RngCursor> cursors, std::span<double> uniforms, SimdLevel level = simd_level());

}  // namespace embscale
