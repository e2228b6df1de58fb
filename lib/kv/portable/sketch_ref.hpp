// The admission filters' banked count-min sketch over plain arrays, written once for the host
// (kv/admission.hpp's BankedSketch runs on it) and the device (the GPU table's kernels): its
// layout, recording, estimate, aging and admission rule are kv/admission.hpp's, which states them.
//
// A SketchRef is a view: counters (banks x blocks x 64 bytes) and per-bank sighting counts live
// where the table's arrays live. A bank belongs to one table bucket, so a bucket's keys, processed
// by one tile in input order (kv/portable/batch_ref.hpp), are the only ones that touch it.
#pragma once

#include <cstdint>

#include "core/hash.hpp"
#include "kv/portable/host_device.hpp"

namespace embscale::kv::portable {

inline constexpr std::uint64_t kSketchSaltMix = 0x5bd1e9955bd1e995ULL;
inline constexpr unsigned kSketchCountersPerBlock = 64;
inline constexpr unsigned kSketchBlockShift = 48;  // the block index from h's top 16 bits; rows use 6
                                                   // bits each of the low 48 (depth <= 8)
inline constexpr unsigned kSketchMaxDepth = 8;

// The filters (kv/admission.hpp's AdmissionOptions::Kind, in its order).
enum class FilterKind : std::uint8_t { kNone, kKCount, kTinyLfu };

struct SketchRef {
  std::uint8_t* counters = nullptr;    // buckets x blocks x 64
  std::uint32_t* sightings = nullptr;  // per bank, since its last halving
  std::uint64_t buckets = 0;           // banks, the table's buckets (a power of two)
  std::uint64_t blocks = 0;            // per bank, a power of two
  std::uint32_t depth = 0;             // counters per key, [1, 8]
  std::uint32_t per_row = 0;           // 64 / depth
  std::uint32_t max_count = 0;         // counters saturate here
  std::uint64_t period = 0;            // sightings between halvings; 0: no aging
  std::uint64_t salt = 0;              // mix64(seed ^ kSketchSaltMix)
  bool conservative = false;

  // Where a key's counters are: its bank, its block (an index of 64-counter blocks) and its
  // counter of each row within the block.
  struct Cells {
    std::uint64_t bank;
    std::uint64_t block;
    std::uint32_t at[kSketchMaxDepth];
  };

  EMBSCALE_HD Cells cells(std::uint64_t key) const {
    Cells c{};
    c.bank = mix64(key) & (buckets - 1);
    const std::uint64_t h = mix64(key ^ salt);
    c.block = c.bank * blocks + ((h >> kSketchBlockShift) & (blocks - 1));
    for (std::uint32_t r = 0; r < depth; ++r) {
      const auto bits = static_cast<std::uint32_t>((h >> (6 * r)) & 63);
      c.at[r] = r * per_row + ((bits * per_row) >> 6);
    }
    return c;
  }

  EMBSCALE_HD std::uint8_t* block_of(const Cells& c) const { return counters + c.block * kSketchCountersPerBlock; }

  // One sighting of `key`; true when it was its bank's period-th since the last halving, which
  // halved the bank.
  EMBSCALE_HD bool record(std::uint64_t key) const {
    const Cells c = cells(key);
    std::uint8_t* block = block_of(c);
    if (conservative) {
      std::uint32_t least = max_count;
      for (std::uint32_t r = 0; r < depth; ++r) least = block[c.at[r]] < least ? block[c.at[r]] : least;
      if (least < max_count)
        for (std::uint32_t r = 0; r < depth; ++r)
          if (block[c.at[r]] == least) ++block[c.at[r]];
    } else {
      for (std::uint32_t r = 0; r < depth; ++r)
        if (block[c.at[r]] < max_count) ++block[c.at[r]];
    }
    if (period == 0 || ++sightings[c.bank] < period) return false;
    halve(c.bank);
    return true;
  }

  // The least of the key's counters.
  EMBSCALE_HD int estimate(std::uint64_t key) const {
    const Cells c = cells(key);
    const std::uint8_t* block = block_of(c);
    std::uint32_t least = max_count;
    for (std::uint32_t r = 0; r < depth; ++r) least = block[c.at[r]] < least ? block[c.at[r]] : least;
    return static_cast<int>(least);
  }

  EMBSCALE_HD void halve(std::uint64_t bank) const {
    std::uint8_t* first = counters + bank * blocks * kSketchCountersPerBlock;
    for (std::uint64_t i = 0; i < blocks * kSketchCountersPerBlock; ++i)
      first[i] = static_cast<std::uint8_t>(first[i] >> 1);
    sightings[bank] = 0;
  }
};

// The filter's verdict on a newcomer whose sighting is recorded: k-count admits it on its k-th
// sighting; TinyLFU into a free slot always, in place of a victim (of the same bucket, so the same
// bank) only when its estimate is strictly above the victim's. Refusal on score is the caller's.
EMBSCALE_HD inline bool filter_admits(FilterKind kind, int threshold_k, const SketchRef& sketch, std::uint64_t key,
                                      bool free_slot, std::uint64_t victim) {
  switch (kind) {
    case FilterKind::kNone: return true;
    case FilterKind::kKCount: return sketch.estimate(key) >= threshold_k;
    case FilterKind::kTinyLfu: return free_slot || sketch.estimate(key) > sketch.estimate(victim);
  }
  return true;
}

}  // namespace embscale::kv::portable
