// KeyIndex: numbers the distinct keys of a stream 0, 1, 2, ... in order of first appearance, so
// per-key counters live in plain vectors indexed by that dense id (trace statistics, reuse
// distances) instead of in the hash map itself.
//
// Layout: open addressing with linear probing over two parallel arrays, keys_[slot] and
// ids_[slot] (the id plus one; 0 marks an empty slot, so every int64 is a valid key and no
// sentinel key is needed). Capacity is a power of two; the table doubles before its load exceeds
// 1/2, which keeps expected probes per lookup below 2.5 for linear probing (Knuth).
// Memory: 12 bytes per slot, i.e. 24 to 48 bytes per distinct key. Ids are 32-bit: at most
// 2^31 distinct keys (about 100 GB of table before anything else; see trace_stats.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/batch.hpp"
#include "core/hash.hpp"

namespace embscale::workloads {

class KeyIndex {
 public:
  static constexpr std::uint32_t kMaxKeys = std::uint32_t{1} << 31;

  // The dense id of `key`; a key never seen before gets id size() (and size() grows by one).
  // `inserted` tells which happened.
  std::uint32_t find_or_insert(Key key, bool& inserted);
  // The dense id of `key`, or nothing when it was never inserted. Changes nothing.
  std::optional<std::uint32_t> find(Key key) const;
  // Pulls the slot where a probe for `key` starts into the cache (a hint only; nothing changes):
  // callers that know their next keys issue it a few keys ahead so that the misses overlap.
  void prefetch(Key key) const noexcept {
    if (mask_ == 0) return;
    const std::uint64_t slot = mix64(static_cast<std::uint64_t>(key)) & mask_;
    __builtin_prefetch(&keys_[slot]);
    __builtin_prefetch(&ids_[slot]);
  }

  std::uint32_t size() const noexcept { return size_; }
  std::size_t memory_bytes() const noexcept { return keys_.capacity() * sizeof(Key) + ids_.capacity() * sizeof(std::uint32_t); }

 private:
  void grow();

  std::vector<Key> keys_;
  std::vector<std::uint32_t> ids_;  // id + 1, 0 = empty
  std::uint64_t mask_ = 0;          // capacity - 1 (capacity 0 until the first insert)
  std::uint32_t size_ = 0;
};

}  // namespace embscale::workloads
