// A static table's rows as the device sees them: the owned keys as ranges (OwnedKeys' own, plain
// data) and the row of a key, written once for host and device. The device row store
// (device_static_row_store.hpp) uploads the ranges once; the embedding_rows kernels look keys up
// with row_of and update rows with optimizer_ref.hpp.
#pragma once

#include <cstdint>

#include "kv/portable/host_device.hpp"

namespace embscale::embedding::portable {

// Keys begin, begin + stride, ... below end, the first at local row first_row (OwnedKeys::add).
struct OwnedRange {
  std::int64_t begin = 0, end = 0, stride = 1;
  std::int64_t first_row = 0;
};

// The local row of `key` among `count` ranges (ascending by begin, disjoint), or -1 when it is not
// owned: the last range starting at or before it, by binary search, then its stride.
EMBSCALE_HD inline std::int64_t row_of(const OwnedRange* ranges, std::uint64_t count, std::int64_t key) {
  std::uint64_t lo = 0, hi = count;  // the first range with begin > key is at hi
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (ranges[mid].begin <= key) lo = mid + 1;
    else hi = mid;
  }
  if (lo == 0) return -1;
  const OwnedRange& r = ranges[lo - 1];
  if (key >= r.end) return -1;
  const std::int64_t offset = key - r.begin;
  if (r.stride == 1) return r.first_row + offset;
  return offset % r.stride == 0 ? r.first_row + offset / r.stride : -1;
}

// The key of local row `row` (in [0, the ranges' rows)): the last range whose first row is at or
// before it, by binary search.
EMBSCALE_HD inline std::int64_t key_of(const OwnedRange* ranges, std::uint64_t count, std::int64_t row) {
  std::uint64_t lo = 0, hi = count;  // the first range with first_row > row is at hi
  while (lo < hi) {
    const std::uint64_t mid = lo + (hi - lo) / 2;
    if (ranges[mid].first_row <= row) lo = mid + 1;
    else hi = mid;
  }
  const OwnedRange& r = ranges[lo - 1];
  return r.begin + (row - r.first_row) * r.stride;
}

}  // namespace embscale::embedding::portable
