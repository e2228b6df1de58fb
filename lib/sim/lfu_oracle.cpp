#include "sim/lfu_oracle.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale::sim {
namespace {

// Prefetch distances, in accesses: a key's record, then (once it has arrived) its node.
constexpr std::size_t kAhead = 8;
constexpr std::size_t kNear = 4;

}  // namespace

LfuOracle::LfuOracle(std::int64_t capacity) : capacity_(capacity) {
  EMBSCALE_EXPECTS(capacity >= 1 && capacity <= (std::int64_t{1} << 31),
                   "LfuOracle: capacity must be in [1, 2^31] keys");
  const auto slots = static_cast<std::size_t>(capacity);
  nodes_.assign(slots, Node{kNone, kNone, kNone, kNone});
  groups_.resize(slots + 1);
  for (std::size_t g = 0; g < groups_.size(); ++g)
    groups_[g].next = g + 1 < groups_.size() ? static_cast<std::uint32_t>(g + 1) : kNone;
  free_groups_ = 0;
}

std::uint32_t LfuOracle::new_group(std::int64_t count, std::uint32_t after) {
  const std::uint32_t g = free_groups_;  // the pool cannot run dry: see groups_
  free_groups_ = groups_[g].next;
  const std::uint32_t next = after == kNone ? first_group_ : groups_[after].next;
  groups_[g] = {count, kNone, kNone, after, next};
  if (after == kNone) {
    first_group_ = g;
  } else {
    groups_[after].next = g;
  }
  if (next != kNone) groups_[next].prev = g;
  return g;
}

void LfuOracle::free_group(std::uint32_t g) {
  Group& group = groups_[g];
  if (group.prev == kNone) {
    first_group_ = group.next;
  } else {
    groups_[group.prev].next = group.next;
  }
  if (group.next != kNone) groups_[group.next].prev = group.prev;
  group.next = free_groups_;
  free_groups_ = g;
}

void LfuOracle::append(std::uint32_t slot, std::uint32_t g) {
  Group& group = groups_[g];
  Node& node = nodes_[slot];
  node.group = g;
  node.prev = group.tail;
  node.next = kNone;
  if (group.tail == kNone) {
    group.head = slot;
  } else {
    nodes_[group.tail].next = slot;
  }
  group.tail = slot;
}

void LfuOracle::unlink(std::uint32_t slot) {
  const Node& node = nodes_[slot];
  const std::uint32_t g = node.group;
  Group& group = groups_[g];
  if (node.prev == kNone) {
    group.head = node.next;
  } else {
    nodes_[node.prev].next = node.next;
  }
  if (node.next == kNone) {
    group.tail = node.prev;
  } else {
    nodes_[node.next].prev = node.prev;
  }
  if (group.head == kNone) free_group(g);
}

std::uint32_t LfuOracle::group_after(std::uint32_t g) {
  const std::uint32_t next = groups_[g].next;
  const std::int64_t count = groups_[g].count + 1;
  return next != kNone && groups_[next].count == count ? next : new_group(count, g);
}

std::int64_t LfuOracle::access(std::span<const std::int64_t> call) {
  ids_.resize(call.size());
  index_.find_or_insert_all(call, ids_);
  const std::size_t known = keys_.size();  // ids from here on are the call's new keys
  keys_.resize(index_.size());
  records_.resize(index_.size(), KeyRecord{0, kNone});
  for (std::size_t i = 0; i < call.size(); ++i)
    if (ids_[i] >= known) keys_[ids_[i]] = call[i];
  std::int64_t hits = 0;
  const std::size_t n = call.size();
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) __builtin_prefetch(&records_[ids_[i + kAhead]]);
    if (i + kNear < n) {
      const std::uint32_t ahead = records_[ids_[i + kNear]].slot;  // a hint only: it may move
      if (ahead != kNone) __builtin_prefetch(&nodes_[ahead]);
    }
    const std::uint32_t id = ids_[i];
    KeyRecord& record = records_[id];
    const std::int64_t count = ++record.count;
    const std::uint32_t slot = record.slot;
    if (slot != kNone) {  // a hit: to the tail of the next count's group
      ++hits;
      const std::uint32_t to = group_after(nodes_[slot].group);
      unlink(slot);  // after group_after: the old group is still the new one's anchor
      append(slot, to);
      continue;
    }
    if (size_ < capacity_) {  // not full: only first accesses arrive here (nothing was evicted)
      const auto free_slot = static_cast<std::uint32_t>(size_++);
      const std::uint32_t to =
          first_group_ != kNone && groups_[first_group_].count == count ? first_group_ : new_group(count, kNone);
      nodes_[free_slot].id = id;
      record.slot = free_slot;
      append(free_slot, to);
      continue;
    }
    const std::uint32_t low = first_group_;
    if (count <= groups_[low].count) continue;  // ties keep the resident
    // count == m + 1 (the invariant in the header): the newcomer goes after the smallest group;
    // its victim is that group's head, whose slot it takes.
    const std::uint32_t victim_slot = groups_[low].head;
    const std::uint32_t to = group_after(low);
    unlink(victim_slot);
    records_[nodes_[victim_slot].id].slot = kNone;
    nodes_[victim_slot].id = id;
    record.slot = victim_slot;
    append(victim_slot, to);
  }
  return hits;
}

bool LfuOracle::contains(std::int64_t key) const {
  const auto id = index_.find(key);
  return id && records_[*id].slot != kNone;
}

std::int64_t LfuOracle::count(std::int64_t key) const {
  const auto id = index_.find(key);
  return id ? records_[*id].count : 0;
}

std::vector<std::int64_t> LfuOracle::top_keys(std::int64_t k) const {
  std::vector<std::uint32_t> ids(keys_.size());
  for (std::size_t i = 0; i < ids.size(); ++i) ids[i] = static_cast<std::uint32_t>(i);
  const auto take = static_cast<std::size_t>(std::clamp<std::int64_t>(k, 0, distinct()));
  const auto before = [&](std::uint32_t a, std::uint32_t b) {
    return records_[a].count != records_[b].count ? records_[a].count > records_[b].count : keys_[a] < keys_[b];
  };
  std::partial_sort(ids.begin(), ids.begin() + static_cast<std::ptrdiff_t>(take), ids.end(), before);
  std::vector<std::int64_t> top(take);
  for (std::size_t i = 0; i < take; ++i) top[i] = keys_[ids[i]];
  return top;
}

}  // namespace embscale::sim
