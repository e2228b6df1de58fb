#include "plan/memory_model.hpp"

#include <algorithm>
#include <bit>

namespace embscale::plan {
namespace {

// The smallest power-of-two number of buckets holding at least `slots` slots, in slots.
std::int64_t round_up_to_buckets(std::int64_t slots, std::int64_t bucket_capacity) {
  const auto buckets =
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, (slots + bucket_capacity - 1) / bucket_capacity));
  return static_cast<std::int64_t>(std::bit_ceil(buckets)) * bucket_capacity;
}

}  // namespace

std::int64_t kv_capacity(const config::EmbeddingStorage& storage, double keys) {
  const auto& table = storage.table;
  const std::int64_t limit = round_up_to_buckets(table.max_capacity, table.bucket_capacity);
  std::int64_t capacity =
      round_up_to_buckets(table.init_capacity > 0 ? table.init_capacity : table.max_capacity, table.bucket_capacity);
  while (keys > table.max_load_factor * static_cast<double>(capacity) && capacity < limit) capacity *= 2;
  return std::min(capacity, limit);
}

double kv_table_bytes(const config::EmbeddingStorage& storage, double keys, double row_bytes) {
  return static_cast<double>(kv_capacity(storage, keys)) * (kKvSlotOverheadBytes + row_bytes);
}

}  // namespace embscale::plan
