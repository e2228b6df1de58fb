#include "kv/mapped_storage.hpp"

#include <algorithm>

namespace embscale::kv {
namespace {

TableOptions storage_options(std::int64_t row_width, std::int64_t capacity, const std::string& directory,
                             std::int64_t bucket_capacity) {
  TableOptions o;
  o.dim = row_width;
  o.max_capacity = capacity;
  o.init_capacity = std::min<std::int64_t>(capacity, std::int64_t{1} << 16);  // grows as it fills
  o.max_load_factor = 0.75;
  o.bucket_capacity = bucket_capacity;
  o.score_strategy = ScoreStrategy::kCustomized;  // entries arrive with their scores
  o.training = false;                             // no optimizer state of its own: rows are opaque
  o.rows_directory = directory;
  return o;
}

}  // namespace

MappedStorage::MappedStorage(std::int64_t row_width, std::int64_t capacity, std::string directory,
                             std::int64_t bucket_capacity)
    : directory_(std::move(directory)), table_(storage_options(row_width, capacity, directory_, bucket_capacity)) {}

void MappedStorage::find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                         std::span<std::uint64_t> scores) const {
  table_.find(keys, values, founds, scores);
}

std::int64_t MappedStorage::insert(std::span<const std::uint64_t> keys, std::span<const float> values,
                                   std::span<const std::uint64_t> scores) {
  const CallStats stats = table_.restore(keys, values, scores);
  return stats.evicted + stats.refused + stats.not_admitted;  // restore bypasses admission: 0
}

std::int64_t MappedStorage::erase(std::span<const std::uint64_t> keys) { return table_.erase(keys).found; }

void MappedStorage::for_each(const Visitor& visit) const {
  constexpr std::int64_t kSlotsPerBatch = std::int64_t{1} << 14;
  Evicted batch;
  const std::int64_t slots = table_.capacity();
  for (std::int64_t offset = 0; offset < slots; offset += kSlotsPerBatch)
    if (table_.export_batch(offset, kSlotsPerBatch, batch.keys, batch.values, batch.scores) > 0)
      visit(batch.keys, batch.values, batch.scores);
}

}  // namespace embscale::kv
