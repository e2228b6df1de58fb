#include "workloads/key_index.hpp"

#include <utility>

#include "core/error.hpp"
#include "core/hash.hpp"

namespace embscale::workloads {

std::uint32_t KeyIndex::find_or_insert(Key key, bool& inserted) {
  // Keeps load <= 1/2 after this insert: size_ + 1 <= capacity / 2.
  if (2 * (std::uint64_t{size_} + 1) > mask_ + 1) grow();
  for (std::uint64_t slot = mix64(static_cast<std::uint64_t>(key)) & mask_;; slot = (slot + 1) & mask_) {
    if (ids_[slot] == 0) {
      EMBSCALE_EXPECTS(size_ < kMaxKeys, "KeyIndex holds at most 2^31 distinct keys");
      keys_[slot] = key;
      ids_[slot] = ++size_;
      inserted = true;
      return size_ - 1;
    }
    if (keys_[slot] == key) {
      inserted = false;
      return ids_[slot] - 1;
    }
  }
}

std::optional<std::uint32_t> KeyIndex::find(Key key) const {
  if (mask_ == 0) return std::nullopt;
  // Load <= 1/2: an empty slot ends every probe.
  for (std::uint64_t slot = mix64(static_cast<std::uint64_t>(key)) & mask_;; slot = (slot + 1) & mask_) {
    if (ids_[slot] == 0) return std::nullopt;
    if (keys_[slot] == key) return ids_[slot] - 1;
  }
}

void KeyIndex::grow() {
  const std::uint64_t capacity = mask_ == 0 ? 1024 : 2 * (mask_ + 1);
  std::vector<Key> keys(capacity);
  std::vector<std::uint32_t> ids(capacity, 0);
  const std::uint64_t mask = capacity - 1;
  for (std::size_t old = 0; old < ids_.size(); ++old) {
    if (ids_[old] == 0) continue;
    std::uint64_t slot = mix64(static_cast<std::uint64_t>(keys_[old])) & mask;
    while (ids[slot] != 0) slot = (slot + 1) & mask;
    keys[slot] = keys_[old];
    ids[slot] = ids_[old];
  }
  keys_ = std::move(keys);
  ids_ = std::move(ids);
  mask_ = mask;
}

}  // namespace embscale::workloads
