// HostTable's reads of every entry: export_batch (a range of slots), export_batch_if (every entry
// at or above a score), export_stored (the dump files' stream) and erase_if. The exports share one
// loop over the stored entries, for_each_stored.
#include <algorithm>
#include <vector>

#include "core/error.hpp"
#include "kv/host_table.hpp"

namespace embscale::kv {

template <typename Visit>
void HostTable::for_each_stored(std::int64_t first_slot, std::int64_t end_slot, std::uint64_t min_score,
                                Visit&& visit) const {
  first_slot = std::max<std::int64_t>(first_slot, 0);
  end_slot = std::min(end_slot, slots());
  for (std::int64_t b = first_slot / bucket_capacity_; b * bucket_capacity_ < end_slot; ++b) {
    const std::int64_t base = b * bucket_capacity_;
    const std::int64_t end = std::min<std::int64_t>(occupied_[static_cast<std::size_t>(b)], end_slot - base);
    for (std::int64_t i = std::max<std::int64_t>(first_slot - base, 0); i < end; ++i) {
      const auto slot = static_cast<std::size_t>(base + i);
      if (scores_[slot] >= min_score) visit(slot);
    }
  }
}

std::int64_t HostTable::export_entries(std::int64_t first_slot, std::int64_t end_slot, std::uint64_t min_score,
                                       std::vector<std::uint64_t>& keys, std::vector<float>& values,
                                       std::vector<std::uint64_t>& scores) const {
  keys.clear();
  values.clear();
  scores.clear();
  const auto width = static_cast<std::size_t>(row_width_);
  for_each_stored(first_slot, end_slot, min_score, [&](std::size_t slot) {
    keys.push_back(keys_[slot]);
    scores.push_back(scores_[slot]);
    values.resize(values.size() + width);
    read_row(static_cast<std::int64_t>(slot), std::span<float>(values).last(width));
  });
  return static_cast<std::int64_t>(keys.size());
}

std::int64_t HostTable::export_batch(std::int64_t offset, std::int64_t count, std::vector<std::uint64_t>& keys,
                                     std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  const GroupLock lock(calls_, Access::kRead);
  return export_entries(offset, std::min(offset + count, slots()), 0, keys, values, scores);
}

std::int64_t HostTable::export_batch_if(std::uint64_t threshold, std::vector<std::uint64_t>& keys,
                                        std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  const GroupLock lock(calls_, Access::kRead);
  return export_entries(0, slots(), threshold, keys, values, scores);
}

// For dump and load (kv/table_file.hpp); reads only, like export_batch_if.
std::int64_t HostTable::export_stored(std::uint64_t threshold, std::int64_t chunk_entries,
                                      const std::function<void(const ExportSummary&)>& begin,
                                      const std::function<void(const StoredEntries&)>& chunk) const {
  EMBSCALE_EXPECTS(chunk_entries >= 1, "export_stored: chunk_entries must be >= 1");
  const GroupLock lock(calls_, Access::kRead);
  ExportSummary summary;
  for_each_stored(0, slots(), threshold, [&](std::size_t slot) {
    ++summary.count;
    summary.max_score = std::max(summary.max_score, scores_[slot]);
  });
  summary.score_now = get_score();
  begin(summary);
  const std::int64_t count = summary.count;
  const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
  const auto cap = static_cast<std::size_t>(std::min(chunk_entries, std::max<std::int64_t>(count, 1)));
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> scores;
  std::vector<std::byte> rows;
  keys.reserve(cap);
  scores.reserve(cap);
  rows.reserve(cap * row_bytes);
  const auto flush = [&] {
    chunk({keys, scores, rows});
    keys.clear();
    scores.clear();
    rows.clear();
  };
  for_each_stored(0, slots(), threshold, [&](std::size_t slot) {
    keys.push_back(keys_[slot]);
    scores.push_back(scores_[slot]);
    const std::byte* row = rows_.data() + slot * row_bytes;
    rows.insert(rows.end(), row, row + row_bytes);
    if (keys.size() == cap) flush();
  });
  if (!keys.empty()) flush();
  return count;
}

std::int64_t HostTable::erase_if(const std::function<bool(std::uint64_t, std::uint64_t)>& predicate) {
  const GroupLock lock(calls_, Access::kExclusive);
  std::int64_t erased = 0;
  for (std::int64_t b = 0; b < buckets_; ++b)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(occupied_[static_cast<std::size_t>(b)]);) {
      const auto slot = static_cast<std::size_t>(b * bucket_capacity_ + i);
      if (predicate(keys_[slot], scores_[slot])) {
        remove({b, i});  // the last entry moves here: look at slot i again
        ++erased;
        --size_;
      } else {
        ++i;
      }
    }
  return erased;
}

}  // namespace embscale::kv
