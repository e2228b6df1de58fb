// LfuOracle: perfect LFU (global, full history) of `capacity` keys, exact, O(1) per access.
//
// Definition. Every key ever seen has its exact count of accesses (kept after eviction). Accesses
// come in calls (one table call's keys in order, distinct within the call); an access hits when
// the key was resident just before it. After an access raises a non-resident key's count to c:
//   * while fewer than `capacity` keys are resident, the key enters;
//   * else it replaces a resident of the smallest resident count m when c > m (ties keep the
//     resident). The resident replaced is the one of count m accessed least recently (each access
//     of a resident raises its count, so: the one that reached count m first).
// Invariant: no non-resident key counts more than m (one that does enters at once, and m never
// falls), so a key that enters has c = m + 1, and a first access never enters a full cache.
//
// Structure (the constant-time LFU of Shah, Mitra & Matani, 2010, index-based). Residents occupy
// slots 0..capacity-1; each slot is in a doubly linked list of its count's group, in order of
// arrival at that count; groups form a list in increasing count. An access moves one slot to the
// tail of the next group (made when missing, freed when emptied), and the victim is the head of
// the first group. Slots and groups are preallocated arrays linked by 32-bit indices: nothing is
// allocated per access once the per-key arrays have grown.
//
// Memory: per distinct key 24 bytes (count and slot, the key) plus KeyIndex's 32-64; per capacity
// slot a 16-byte node (id and links, one cache line holds four) and a 24-byte group record. A
// call's ids are found first (workloads::KeyIndex::find_or_insert_all) and its keys' records
// prefetched ahead: the misses of the call's cold keys overlap.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/huge_page_allocator.hpp"
#include "workloads/key_index.hpp"

namespace embscale::sim {

class LfuOracle {
 public:
  // capacity >= 1 keys, at most 2^31.
  explicit LfuOracle(std::int64_t capacity);

  // Applies one call's accesses in order; returns how many hit. Keys distinct within the call.
  std::int64_t access(std::span<const std::int64_t> call);

  bool contains(std::int64_t key) const;
  // Accesses of `key` so far (0 for a key never seen).
  std::int64_t count(std::int64_t key) const;
  // Keys seen so far.
  std::int64_t distinct() const noexcept { return static_cast<std::int64_t>(keys_.size()); }
  // The k most frequent keys seen so far (ties: the smaller key first), most frequent first; all
  // of them when k >= distinct(). O(D log k).
  std::vector<std::int64_t> top_keys(std::int64_t k) const;

  std::int64_t capacity() const noexcept { return capacity_; }
  std::int64_t size() const noexcept { return size_; }

 private:
  static constexpr std::uint32_t kNone = ~std::uint32_t{0};

  struct Group {
    std::int64_t count;  // the count of every slot in it
    std::uint32_t head;  // its slots in order of arrival: head arrived first
    std::uint32_t tail;
    std::uint32_t prev;  // the group of the next smaller count, or kNone
    std::uint32_t next;  // the group of the next larger count, or kNone; the free list's link
  };

  // A group of `count` placed after group `after` (kNone: first), empty.
  std::uint32_t new_group(std::int64_t count, std::uint32_t after);
  void free_group(std::uint32_t g);
  void append(std::uint32_t slot, std::uint32_t g);  // to g's tail
  void unlink(std::uint32_t slot);                   // from its group, freeing the group if emptied
  // The group of count + 1 right after group g (made when missing).
  std::uint32_t group_after(std::uint32_t g);

  struct KeyRecord {
    std::int64_t count;
    std::uint32_t slot;  // kNone when not resident
  };
  struct Node {  // a resident's slot
    std::uint32_t id;
    std::uint32_t prev;  // within the slot's group, in order of arrival
    std::uint32_t next;
    std::uint32_t group;
  };
  static_assert(sizeof(Node) == 16, "four nodes to a cache line");

  workloads::KeyIndex index_;
  HugePageVector<KeyRecord> records_;  // per dense id (KeyIndex's numbering)
  std::vector<std::int64_t> keys_;     // per dense id: the key (for top_keys)
  HugePageVector<Node> nodes_;         // per slot
  std::vector<std::uint32_t> ids_;     // one call's ids (scratch, kept)
  // Groups: a pool of capacity + 1 (at most capacity non-empty, plus one made before one is freed).
  HugePageVector<Group> groups_;
  std::uint32_t first_group_ = kNone;  // the smallest count's
  std::uint32_t free_groups_ = kNone;
  std::int64_t capacity_;
  std::int64_t size_ = 0;
};

}  // namespace embscale::sim
