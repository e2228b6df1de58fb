// One bucket of the KV table, probed by a tile of lanes (tile.hpp): the bucket logic written once
// for the host (the CPU tests, HostTile and HostAtomics) and the device (the GPU table's kernels,
// kernels/device_tile.cuh), as cuCollections' `*_ref` types are: the bulk operations and the
// embedding kernels of the GPU step share this one probing path.
//
// Layout (the device table's; HierarchicalKV's): per slot a key, a uint64 score and a one-byte
// digest (the top byte of mix64(key), as in kv/host_table.hpp), each in its own array, the bucket
// `capacity` slots (a multiple of the tile's lanes). Keys 2^64-3 .. 2^64-1 are reserved (the CPU
// table refuses them too): kEmptyKey marks a slot never used since the table was cleared,
// kReclaimedKey a slot whose key was erased.
//
// Probing. A key's probe visits the bucket's slots from `start` (a multiple of the tile's lanes,
// from the key's hash, so that keys of one bucket start apart), a tile's width at a time,
// wrapping. Invariant: a key lives before the first empty slot of its probe order, because a slot
// leaves kEmptyKey only to hold a key and returns to it only when the table is cleared, and a key
// takes the first free (empty or reclaimed) slot of its probe order. So find stops at an empty
// slot, and claim fills the first free one.
//
// Concurrency (the device table's batches): a slot is taken by one compare-and-swap of its key,
// from the free value the tile saw, to the new key; a tile that loses the race looks again. Two
// tiles never insert the same key at once: a batch is de-duplicated before its inserts (the
// device table's rule for duplicate keys). Digests and scores are written after the key, and read
// by the kernels that run after the insert (stream order), never during it.
#pragma once

#include <cstdint>

#include "kv/portable/host_device.hpp"
#include "kv/portable/tile.hpp"

namespace embscale::kv::portable {

inline constexpr std::uint64_t kEmptyKey = 0xFFFFFFFFFFFFFFFFULL;       // never used since clear
inline constexpr std::uint64_t kReclaimedKey = 0xFFFFFFFFFFFFFFFEULL;   // its key was erased
inline constexpr std::uint64_t kFirstReserved = 0xFFFFFFFFFFFFFFFDULL;  // 2^64-3 .. 2^64-1
inline constexpr std::uint32_t kNoSlot = 0xFFFFFFFFu;

EMBSCALE_HD constexpr bool holds_key(std::uint64_t slot_key) { return slot_key < kFirstReserved; }
EMBSCALE_HD constexpr bool is_free(std::uint64_t slot_key) {
  return slot_key == kEmptyKey || slot_key == kReclaimedKey;
}

// What a full bucket would give up for a newcomer: its slot of lowest score, ties broken by the
// smallest key (the CPU table's rule: the choice does not depend on slot order).
struct Victim {
  std::uint32_t slot = kNoSlot;
  std::uint64_t key = kEmptyKey;
  std::uint64_t score = 0;
};

// How a newcomer was placed by insert_or_evict.
enum class Placement : std::uint8_t {
  kFound,     // the key was in the bucket already (nothing changed)
  kFreeSlot,  // it took a free slot
  kEvicted,   // it replaced the victim, whose key and score the result names
  kRefused,   // the bucket is full and every key in it scores above the newcomer
  kAbsent,    // absent and not to be inserted (table_ref.hpp: accumulating into a missing key)
};

struct PlacementResult {
  Placement placement = Placement::kRefused;
  std::uint32_t slot = kNoSlot;
  Victim victim;  // kEvicted: whom it replaced
};

template <class Tile, class Atomics> class BucketRef {
 public:
  EMBSCALE_HD BucketRef(std::uint64_t* keys, std::uint64_t* scores, std::uint8_t* digests, std::uint32_t capacity)
      : keys_(keys), scores_(scores), digests_(digests), capacity_(capacity) {}

  EMBSCALE_HD std::uint32_t capacity() const { return capacity_; }

  // The first slot a key's probe visits: from the hash's middle bits (the bucket index takes its
  // low bits, the digest its top byte), rounded down to the tile's width.
  EMBSCALE_HD std::uint32_t probe_start(std::uint64_t hash) const {
    return static_cast<std::uint32_t>((hash >> 32) % capacity_) / Tile::kSize * Tile::kSize;
  }

  // The slot holding `key`, or kNoSlot.
  EMBSCALE_HD std::uint32_t find(const Tile& tile, std::uint64_t key, std::uint8_t digest, std::uint32_t start) const {
    for (std::uint32_t step = 0; step < capacity_; step += Tile::kSize) {
      const std::uint32_t base = (start + step) % capacity_;
      const unsigned match =
          tile.ballot([&](unsigned lane) { return digests_[base + lane] == digest && key_at(base + lane) == key; });
      if (match) return base + lowest_lane(match);
      if (tile.ballot([&](unsigned lane) { return key_at(base + lane) == kEmptyKey; })) return kNoSlot;
    }
    return kNoSlot;
  }

  // Puts `key` (absent from the bucket) in the first free slot of its probe order, with its
  // digest and score; returns the slot, or kNoSlot when the bucket is full.
  EMBSCALE_HD std::uint32_t claim_free(const Tile& tile, std::uint64_t key, std::uint8_t digest, std::uint64_t score,
                                       std::uint32_t start) {
    for (std::uint32_t step = 0; step < capacity_;) {
      const std::uint32_t base = (start + step) % capacity_;
      const unsigned free = tile.ballot([&](unsigned lane) { return is_free(key_at(base + lane)); });
      if (!free) {
        step += Tile::kSize;
        continue;
      }
      const std::uint32_t slot = base + lowest_lane(free);
      const std::uint64_t seen = key_at(slot);
      // Every lane computes the same compare-and-swap; on the device the tile's lowest lane makes
      // it (kernels/device_tile.cuh) and shares the old value.
      if (is_free(seen) && tile_compare_and_swap(tile, slot, seen, key) == seen) {
        digests_[slot] = digest;
        scores_[slot] = score;
        return slot;
      }
      // Lost the slot to another tile: look at this chunk again.
    }
    return kNoSlot;
  }

  // The first free slot of the probe order from `start`, or kNoSlot when the bucket is full;
  // nothing changes. (A caller that is the bucket's only writer then claims it with claim_free,
  // which finds the same slot.)
  EMBSCALE_HD std::uint32_t first_free(const Tile& tile, std::uint32_t start) const {
    for (std::uint32_t step = 0; step < capacity_; step += Tile::kSize) {
      const std::uint32_t base = (start + step) % capacity_;
      const unsigned free = tile.ballot([&](unsigned lane) { return is_free(key_at(base + lane)); });
      if (free) return base + lowest_lane(free);
    }
    return kNoSlot;
  }

  // Puts `key` in the victim's slot when the victim still holds it; false when another tile took
  // the slot first.
  EMBSCALE_HD bool replace(const Tile& tile, const Victim& victim, std::uint64_t key, std::uint8_t digest,
                           std::uint64_t score) {
    if (tile_compare_and_swap(tile, victim.slot, victim.key, key) != victim.key) return false;
    digests_[victim.slot] = digest;
    scores_[victim.slot] = score;
    return true;
  }

  // Halves every score of the bucket (s >>= 1): FREQUENCY's aging with the admission filter's
  // bank (kv/score_rules.hpp). The lanes share the slots.
  EMBSCALE_HD void halve_scores(const Tile& tile) { tile.for_each_lane(HalveScores{scores_, capacity_}); }

  // The bucket's slot of lowest (score, key) among the slots that hold a key; slot kNoSlot when
  // none does.
  EMBSCALE_HD Victim lowest(const Tile& tile) const {
    Victim best;
    for (std::uint32_t base = 0; base < capacity_; base += Tile::kSize) {
      const auto key_of = [&](unsigned lane) { return key_at(base + lane); };
      const std::uint64_t least_score =
          tile.min([&](unsigned lane) { return holds_key(key_of(lane)) ? scores_[base + lane] : ~std::uint64_t{0}; });
      const unsigned held = tile.ballot([&](unsigned lane) { return holds_key(key_of(lane)); });
      if (!held) continue;
      const std::uint64_t least_key = tile.min([&](unsigned lane) {
        return holds_key(key_of(lane)) && scores_[base + lane] == least_score ? key_of(lane) : kEmptyKey;
      });
      const bool better =
          best.slot == kNoSlot || least_score < best.score || (least_score == best.score && least_key < best.key);
      if (better) {
        const unsigned at = tile.ballot([&](unsigned lane) { return key_of(lane) == least_key; });
        best = Victim{base + lowest_lane(at), least_key, least_score};
      }
    }
    return best;
  }

  // `key` (with its digest and score) into the bucket: found, into a free slot, or in place of
  // the victim when its score is not lower than the victim's (else refused): the CPU table's
  // placement rule (kv/host_table.hpp). A victim another tile takes first is chosen again.
  EMBSCALE_HD PlacementResult insert_or_evict(const Tile& tile, std::uint64_t key, std::uint8_t digest,
                                              std::uint64_t score, std::uint32_t start) {
    PlacementResult result;
    if ((result.slot = find(tile, key, digest, start)) != kNoSlot) {
      result.placement = Placement::kFound;
      return result;
    }
    return place_absent(tile, key, digest, score, start);
  }

  // insert_or_evict for a key known to be absent (its find already made): a free slot, else the
  // victim's, else refused.
  EMBSCALE_HD PlacementResult place_absent(const Tile& tile, std::uint64_t key, std::uint8_t digest,
                                           std::uint64_t score, std::uint32_t start) {
    PlacementResult result;
    if ((result.slot = claim_free(tile, key, digest, score, start)) != kNoSlot) {
      result.placement = Placement::kFreeSlot;
      return result;
    }
    for (;;) {
      const Victim victim = lowest(tile);
      if (victim.slot == kNoSlot || score < victim.score) {
        result.placement = Placement::kRefused;
        result.slot = kNoSlot;
        return result;
      }
      if (replace(tile, victim, key, digest, score)) {
        result.placement = Placement::kEvicted;
        result.slot = victim.slot;
        result.victim = victim;
        return result;
      }
    }
  }

  // Erases `key`: its slot becomes reclaimed (probes go on past it). Returns the slot, or kNoSlot.
  EMBSCALE_HD std::uint32_t erase(const Tile& tile, std::uint64_t key, std::uint8_t digest, std::uint32_t start) {
    const std::uint32_t slot = find(tile, key, digest, start);
    if (slot != kNoSlot && tile_compare_and_swap(tile, slot, key, kReclaimedKey) != key) return kNoSlot;
    return slot;
  }

 private:
  // Keys are read atomically: other tiles take slots while a tile probes.
  EMBSCALE_HD std::uint64_t key_at(std::uint32_t slot) const { return Atomics::load(keys_ + slot); }

  // One compare-and-swap for the whole tile. On the host the tile is one thread; on the device
  // the tile's implementation (DeviceTile::single) lets one lane make it and shares the result.
  EMBSCALE_HD std::uint64_t tile_compare_and_swap(const Tile& tile, std::uint32_t slot, std::uint64_t expected,
                                                  std::uint64_t desired) {
    return tile.single(CompareAndSwap{keys_ + slot, expected, desired});
  }

  // The compare-and-swap as a named callable: a lambda here would not carry EMBSCALE_HD's
  // exemption from nvcc's host/device call check.
  struct CompareAndSwap {
    std::uint64_t* address;
    std::uint64_t expected, desired;
    EMBSCALE_HD std::uint64_t operator()() const { return Atomics::compare_and_swap(address, expected, desired); }
  };

  struct HalveScores {
    std::uint64_t* scores;
    std::uint32_t capacity;
    EMBSCALE_HD void operator()(unsigned lane) const {
      for (std::uint32_t i = lane; i < capacity; i += Tile::kSize) scores[i] >>= 1;
    }
  };

  std::uint64_t* keys_;
  std::uint64_t* scores_;
  std::uint8_t* digests_;
  std::uint32_t capacity_;
};

}  // namespace embscale::kv::portable
