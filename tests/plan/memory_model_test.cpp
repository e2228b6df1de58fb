#include "plan/memory_model.hpp"

#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "kv/host_kv_table.hpp"

namespace embscale::plan {
namespace {

// The capacity the planner charges is the capacity lib/kv's table reaches holding that many keys
// (inserted a few at a time, as a run's batches insert them).
TEST(MemoryModel, KvCapacityIsWhatTheTableGrowsTo) {
  for (const std::int64_t init : {std::int64_t{0}, std::int64_t{128}, std::int64_t{1000}}) {
    for (const std::int64_t keys : {10, 200, 1'500, 5'000, 20'000, 70'000}) {
      config::EmbeddingStorage storage;
      storage.dynamic = true;
      storage.table.dim = 4;
      storage.table.max_capacity = 65'536;
      storage.table.init_capacity = init;
      storage.table.max_load_factor = 0.5;
      storage.table.bucket_capacity = 128;
      kv::HostKvTable<std::int64_t> table(storage.table);
      std::vector<std::int64_t> batch(8);
      std::vector<float> rows(batch.size() * 4);
      for (std::int64_t first = 0; first < keys; first += static_cast<std::int64_t>(batch.size())) {
        std::iota(batch.begin(), batch.end(), first);
        (void)table.find_or_insert(batch, rows);
      }
      EXPECT_EQ(kv_capacity(storage, static_cast<double>(keys)), table.capacity())
          << "init " << init << ", keys " << keys;
      EXPECT_DOUBLE_EQ(kv_table_bytes(storage, static_cast<double>(keys), 16.0),
                       static_cast<double>(table.capacity()) * (kKvSlotOverheadBytes + 16.0));
    }
  }
}

}  // namespace
}  // namespace embscale::plan
