#include "workloads/key_index.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::workloads {

std::uint32_t KeyIndex::find_or_insert(Key key, bool& inserted) {
  // Keeps load <= 1/2 after this insert: size_ + 1 <= capacity / 2.
  if (2 * (std::uint64_t{size_} + 1) > mask_ + 1) grow();
  for (std::uint64_t slot = mix64(static_cast<std::uint64_t>(key)) & mask_;; slot = (slot + 1) & mask_) {
    Slot& s = slots_[slot];
    if (s.id_plus_one == 0) {
      EMBSCALE_EXPECTS(size_ < kMaxKeys, "KeyIndex holds at most 2^31 distinct keys");
      s = {key, ++size_};
      inserted = true;
      return size_ - 1;
    }
    if (s.key == key) {
      inserted = false;
      return s.id_plus_one - 1;
    }
  }
}

void KeyIndex::find_or_insert_all(std::span<const Key> keys, std::span<std::uint32_t> ids) {
  // Far enough ahead to cover a miss to memory behind the probes of the keys between; near
  // enough that the prefetched lines are still in L1. A growth in between only
  // wastes the prefetches of that moment.
  constexpr std::size_t kAhead = 12;
  const std::size_t n = keys.size();
  for (std::size_t i = 0; i < std::min(n, kAhead); ++i) prefetch(keys[i]);
  bool inserted = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (i + kAhead < n) prefetch(keys[i + kAhead]);
    ids[i] = find_or_insert(keys[i], inserted);
  }
}

std::optional<std::uint32_t> KeyIndex::find(Key key) const {
  if (mask_ == 0) return std::nullopt;
  // Load <= 1/2: an empty slot ends every probe.
  for (std::uint64_t slot = mix64(static_cast<std::uint64_t>(key)) & mask_;; slot = (slot + 1) & mask_) {
    const Slot& s = slots_[slot];
    if (s.id_plus_one == 0) return std::nullopt;
    if (s.key == key) return s.id_plus_one - 1;
  }
}

void KeyIndex::grow() {
  const std::uint64_t capacity = mask_ == 0 ? 1024 : 2 * (mask_ + 1);
  HugePageVector<Slot> slots(capacity, Slot{0, 0});
  const std::uint64_t mask = capacity - 1;
  for (const Slot& s : slots_) {
    if (s.id_plus_one == 0) continue;
    std::uint64_t slot = mix64(static_cast<std::uint64_t>(s.key)) & mask;
    while (slots[slot].id_plus_one != 0) slot = (slot + 1) & mask;
    slots[slot] = s;
  }
  slots_ = std::move(slots);
  mask_ = mask;
}

}  // namespace embscale::workloads
