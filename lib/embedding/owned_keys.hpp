// The keys a rank holds rows for in a static table, as a few strided ranges of the unified key
// space, and the local row of each: `key % ranks` is one range of stride `ranks`; a contiguous
// row block or a whole table is one range of stride 1 per slot. Rows are numbered range after
// range in the order the ranges were added.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/batch.hpp"
#include "embedding/portable/rows_ref.hpp"

namespace embscale::embedding {

class OwnedKeys {
 public:
  // Adds the keys begin, begin + stride, ... below end. Ranges must be added in ascending order
  // of `begin` and must not overlap.
  void add(Key begin, Key end, Key stride = 1);

  std::int64_t rows() const noexcept { return rows_; }
  // The local row of `key`, or -1 when it is not owned here.
  std::int64_t row_of(Key key) const noexcept;
  // The key of local row `row` in [0, rows()).
  Key key_of(std::int64_t row) const noexcept;
  // The ranges as plain data, for a device row store's lookups (portable::row_of).
  std::vector<portable::OwnedRange> portable_ranges() const;
  // The first key `begin` when the owned keys are one range of stride 1, [begin, begin + rows())
  // (a whole table, a row block, adjacent tables): row_of(key) is then key - begin, a subtraction
  // a caller can run over a whole batch without a call per key. nullopt otherwise (strided or
  // several ranges; a strided range of one key too, though consecutive).
  std::optional<Key> one_block() const noexcept {
    if (ranges_.size() != 1 || ranges_.front().stride != 1) return std::nullopt;
    return ranges_.front().begin;
  }

 private:
  struct Range {
    Key begin, end, stride;
    std::int64_t first_row;
  };
  std::vector<Range> ranges_;
  std::int64_t rows_ = 0;
};

}  // namespace embscale::embedding
