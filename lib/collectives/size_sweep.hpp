// nccl-tests' size flags: -b min bytes, -e max bytes, -f multiplication factor, -i increment.
// Sizes are bytes with an optional K, M, G or T suffix (powers of 1024), as nccl-tests reads them.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace embscale::collectives {

// The largest size a sweep may ask for: 1 TiB (beyond any one buffer a rank can hold).
inline constexpr std::uint64_t kMaxSweepBytes = std::uint64_t{1} << 40;

struct SizeSweep {
  std::uint64_t min_bytes = 0;
  std::uint64_t max_bytes = 0;
  std::uint64_t factor = 0;  // > 1: multiply; 0: add step_bytes
  std::uint64_t step_bytes = 0;
};

// Parses one size; throws InputError naming `flag` when the text is not a non-negative byte count
// (with an optional suffix) or exceeds kMaxSweepBytes.
std::uint64_t parse_size(const std::string& text, std::string_view flag);

// Checks the sweep as a whole (-b not above -e, a factor of at least 2, a positive step) and
// returns its sizes: min, then min * factor (or + step) while not above max. Throws InputError
// naming the flag.
std::vector<std::uint64_t> sweep_sizes(const SizeSweep& sweep);

// "1K", "64M", "3000": the shortest exact spelling of a size, for tables.
std::string format_size(std::uint64_t bytes);

}  // namespace embscale::collectives
