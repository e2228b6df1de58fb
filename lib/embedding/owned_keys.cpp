#include "embedding/owned_keys.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale::embedding {

void OwnedKeys::add(Key begin, Key end, Key stride) {
  EMBSCALE_EXPECTS(stride >= 1 && begin >= 0, "a range needs stride >= 1 and a non-negative begin");
  EMBSCALE_EXPECTS(ranges_.empty() || begin >= ranges_.back().end, "ranges are added in ascending order, disjoint");
  if (end <= begin) return;
  const std::int64_t count = (end - begin + stride - 1) / stride;
  // A range continuing the last one's progression extends it: key % ranks over contiguous slots
  // stays one range, so row_of is one division.
  if (!ranges_.empty()) {
    Range& last = ranges_.back();
    const std::int64_t last_count = (last.end - last.begin + last.stride - 1) / last.stride;
    if (last.stride == stride && begin == last.begin + last_count * stride) {
      last.end = end;
      rows_ += count;
      return;
    }
  }
  ranges_.push_back({begin, end, stride, rows_});
  rows_ += count;
}

std::vector<portable::OwnedRange> OwnedKeys::portable_ranges() const {
  std::vector<portable::OwnedRange> out;
  out.reserve(ranges_.size());
  for (const Range& r : ranges_) out.push_back({r.begin, r.end, r.stride, r.first_row});
  return out;
}

std::int64_t OwnedKeys::row_of(Key key) const noexcept {
  if (ranges_.size() == 1) {  // one division, not two
    const Range& r = ranges_.front();
    if (key < r.begin || key >= r.end) return -1;
    if (r.stride == 1) return key - r.begin;  // whole tables and row blocks: no division
    const std::int64_t row = (key - r.begin) / r.stride;
    return r.begin + row * r.stride == key ? row : -1;
  }
  // The last range starting at or before `key` (ranges are few: a handful of slots).
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), key, [](Key k, const Range& r) { return k < r.begin; });
  if (it == ranges_.begin()) return -1;
  const Range& r = *--it;
  if (key >= r.end) return -1;
  if (r.stride == 1) return r.first_row + (key - r.begin);
  if ((key - r.begin) % r.stride != 0) return -1;
  return r.first_row + (key - r.begin) / r.stride;
}

Key OwnedKeys::key_of(std::int64_t row) const noexcept {
  auto it = std::upper_bound(ranges_.begin(), ranges_.end(), row,
                             [](std::int64_t r, const Range& range) { return r < range.first_row; });
  const Range& r = *--it;
  return r.begin + (row - r.first_row) * r.stride;
}

}  // namespace embscale::embedding
