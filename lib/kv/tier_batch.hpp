// Sub-batches of a batch, for the tiered tables: the positions of the keys a tier handles,
// gathered into contiguous keys and rows, and results scattered back.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "kv/host_table.hpp"

namespace embscale::kv {

struct SubBatch {
  std::vector<std::uint32_t> positions;  // into the whole batch, ascending (input order kept)
  std::vector<std::uint64_t> keys;
  std::vector<float> rows;  // positions.size() x width, when gathered or produced

  std::size_t size() const noexcept { return positions.size(); }
  void add(std::uint32_t position, std::uint64_t key) {
    positions.push_back(position);
    keys.push_back(key);
  }
  // rows[j] = whole[positions[j]] (width floats each).
  void gather_rows(std::span<const float> whole, std::size_t width) {
    rows.resize(positions.size() * width);
    for (std::size_t j = 0; j < positions.size(); ++j)
      std::copy_n(whole.begin() + static_cast<long>(positions[j] * width), width,
                  rows.begin() + static_cast<long>(j * width));
  }
  // whole[positions[j]] = rows[j], for the j with keep[j] (all when keep is empty).
  void scatter_rows(std::span<float> whole, std::size_t width, std::span<const std::uint8_t> keep = {}) const {
    for (std::size_t j = 0; j < positions.size(); ++j)
      if (keep.empty() || keep[j])
        std::copy_n(rows.begin() + static_cast<long>(j * width), width,
                    whole.begin() + static_cast<long>(positions[j] * width));
  }
};

}  // namespace embscale::kv

namespace embscale::kv {

// The distinct keys of a batch: each key once, taken from its first occurrence (or its last, for
// writes where the last one wins), in batch order of those occurrences. slot_of[i] is the index
// among them of keys[i]. The tiered tables work on distinct keys so that a key moved between the
// tiers inside a call is never met again in the same call.
struct DistinctKeys {
  std::vector<std::uint64_t> keys;
  std::vector<std::uint32_t> source;   // the batch position each distinct key was taken from
  std::vector<std::uint32_t> slot_of;  // per batch position

  std::size_t size() const noexcept { return keys.size(); }
};

DistinctKeys distinct_keys(std::span<const std::uint64_t> keys, bool keep_last);

// Every entry of `tier`, a page of slots at a time, rows in float: a tiered table's dump.
using EntryVisitor = std::function<void(std::span<const std::uint64_t> keys, std::span<const float> values,
                                        std::span<const std::uint64_t> scores)>;
void for_each_entry_of(const HostTable& tier, const EntryVisitor& visit);

}  // namespace embscale::kv
