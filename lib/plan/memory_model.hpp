// What a rank holds for a planned layer: a static table's rows (embedding values and optimizer
// state, in the stored value type), or the KV table (lib/kv) a dynamic layer grows to. A rank's
// KV table holds, per slot, the key (8 bytes), its digest (1) and score (8) and the row; it
// starts at init_capacity (0: max_capacity) rounded up to a power-of-two number of buckets and
// doubles while the keys exceed max_load_factor of it, up to max_capacity (kv/host_table.hpp).
#pragma once

#include <cstdint>

#include "config/config.hpp"

namespace embscale::plan {

inline constexpr double kKvSlotOverheadBytes = 8.0 + 1.0 + 8.0;  // key, digest, score

// Slots of the KV table of `storage` once it holds `keys` distinct keys.
std::int64_t kv_capacity(const config::EmbeddingStorage& storage, double keys);

// Bytes of that table with rows of `row_bytes`.
double kv_table_bytes(const config::EmbeddingStorage& storage, double keys, double row_bytes);

}  // namespace embscale::plan
