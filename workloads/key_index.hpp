// KeyIndex: numbers the distinct keys of a stream 0, 1, 2, ... in order of first appearance, so
// per-key counters live in plain vectors indexed by that dense id (trace statistics, reuse
// distances) instead of in the hash map itself.
//
// Layout: open addressing with linear probing over one array of 16-byte slots, each a key and
// its id plus one (0 marks an empty slot, so every int64 is a valid key and no sentinel key is
// needed): a probe reads one cache line (two parallel arrays of keys and ids cost two misses
// per cold key, half of the time a sim/ oracle spent per access). Capacity is a power of two;
// the table doubles before its load exceeds 1/2, which keeps expected probes per lookup below
// 2.5 for linear probing (Knuth). Large tables are in 2 MiB pages where the system allows
// (core/huge_page_allocator.hpp). Memory: 16 bytes per slot, i.e. 32 to 64 bytes per distinct
// key. Ids are 32-bit: at most 2^31 distinct keys (about 140 GB of table before anything else;
// see trace_stats.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "core/batch.hpp"
#include "core/hash.hpp"
#include "core/huge_page_allocator.hpp"

namespace embscale::workloads {

class KeyIndex {
 public:
  static constexpr std::uint32_t kMaxKeys = std::uint32_t{1} << 31;

  // The dense id of `key`; a key never seen before gets id size() (and size() grows by one).
  // `inserted` tells which happened.
  std::uint32_t find_or_insert(Key key, bool& inserted);
  // ids[i] = find_or_insert(keys[i]) for i = 0, 1, ... in turn (ids.size() >= keys.size()), with
  // each key's slot prefetched a few keys ahead so that the cache misses of a batch overlap.
  void find_or_insert_all(std::span<const Key> keys, std::span<std::uint32_t> ids);
  // The dense id of `key`, or nothing when it was never inserted. Changes nothing.
  std::optional<std::uint32_t> find(Key key) const;
  // Pulls the slot where a probe for `key` starts into the cache (a hint only; nothing changes):
  // callers that know their next keys issue it a few keys ahead so that the misses overlap.
  void prefetch(Key key) const noexcept {
    if (mask_ == 0) return;
    __builtin_prefetch(&slots_[mix64(static_cast<std::uint64_t>(key)) & mask_]);
  }

  std::uint32_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept { return slots_.capacity() * sizeof(Slot); }

 private:
  void grow();

  struct Slot {
    Key key;
    std::uint32_t id_plus_one;  // 0: empty
  };
  static_assert(sizeof(Slot) == 16, "a slot is a quarter of a cache line: slots never straddle one");

  HugePageVector<Slot> slots_;
  std::uint64_t mask_ = 0;  // capacity - 1 (capacity 0 until the first insert)
  std::uint32_t size_ = 0;
};

}  // namespace embscale::workloads
