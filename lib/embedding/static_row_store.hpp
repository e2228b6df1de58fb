// StaticRowStore: an array holding a row for every key a rank owns (OwnedKeys), from the start:
// no insertion, no eviction (HugeCTR's and TorchRec's tables). Rows are initialised by the one
// row initializer (kv::initial_row) and stored in the options' value type.
#pragma once

#include <cstddef>
#include <vector>

#include "core/huge_page_allocator.hpp"
#include "embedding/owned_keys.hpp"
#include "embedding/row_store.hpp"
#include "kv/table_options.hpp"

namespace embscale::embedding {

// A static table's initial rows in fp32, one at a time: row r's `dim` values (columns
// [column_first, column_first + dim) of its key's full row, kv::initial_row) then the optimizer's
// initial state (training only). Shared by the host store and the device store, so both start
// from the same bits.
class StaticInitialRows {
 public:
  StaticInitialRows(const OwnedKeys& owned, const kv::TableOptions& options, std::int32_t column_first,
                    std::int32_t full_dim);
  // out: dim + state width values.
  void row(std::int64_t r, std::span<float> out) const;

 private:
  const OwnedKeys& owned_;
  const kv::TableOptions& options_;
  std::int32_t column_first_, dim_, state_width_;
  std::int64_t num_embeddings_;
  mutable std::vector<float> full_;  // scratch: one full row
};

class StaticRowStore final : public RowStore {
 public:
  // Uses options.dim, optimizer_state_width (training only), value_type, training, initializer,
  // seed and num_embeddings (the rest are the dynamic table's). A column shard (column-wise
  // sharding) stores columns [column_first, column_first + options.dim) of rows `full_dim` wide
  // and starts from those columns of the full rows' initial values. `context`: a host context
  // (another is refused), whose threads apply() may use (disjoint rows each; the result does not
  // depend on their number). `memory`: where the rows live (unset: the store's own memory).
  StaticRowStore(OwnedKeys owned, const kv::TableOptions& options, std::int32_t column_first = 0,
                 std::int32_t full_dim = 0, ExecutionContext context = {}, const RowMemory& memory = {});

  std::int32_t dim() const noexcept override { return dim_; }
  std::int32_t state_width() const noexcept override { return state_width_; }
  std::int64_t size() const override { return owned_.rows(); }
  ExecutionContext execution_context() const override { return ExecutionContext::host(threads_); }
  void read(std::span<const Key> keys, std::span<float> rows) override;
  // fp32 rows only (the others are packed).
  bool row_pointers(std::span<const Key> keys, std::span<const float*> rows) override;
  void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
             std::int64_t step) override;
  bool row(Key key, std::span<float> out) const override;
  void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const override;
  StoreCounters take_counters() override;
  // Its rows with their optimizer state (scores 0: a static table has none), by key; no clocks.
  std::vector<TableClock> save_checkpoint(const std::filesystem::path& stem) const override;
  void load_checkpoint(const std::filesystem::path& stem, std::span<const TableClock> clocks) override;
  void load_resharded_checkpoint(std::span<const std::filesystem::path> stems) override;

  const OwnedKeys& owned() const noexcept { return owned_; }

 private:
  std::int64_t checked_row(Key key) const;  // Error when `key` is not owned here
  // The rows of `keys` as (row << 32 | position) in ascending row order: a batch's keys come in
  // first-occurrence order, and visiting their rows in address order instead lets the hardware
  // prefetcher stream a table far larger than the caches (measured: lookup and update of the
  // default run 2.5 and 3.6 ms in key order). An LSD radix sort, O(keys) per pass.
  const std::vector<std::uint64_t>& rows_in_order(std::span<const Key> keys);
  // Rows visited in address order are still random accesses when a batch touches a small share of
  // a large table (the hardware prefetcher does not cross the gaps): the row kRowsAhead visits
  // ahead is prefetched, so that several misses are in flight.
  static constexpr std::size_t kRowsAhead = 8;
  static constexpr std::size_t kLineBytes = 64;
  void prefetch_row(std::int64_t row) const noexcept;
  // Row r occupies words_per_row_ floats of storage_: its values in fp32, or packed fp16/bf16.
  std::byte* bytes_of(std::int64_t row) noexcept {
    return reinterpret_cast<std::byte*>(rows_.data() + static_cast<std::size_t>(row) * words_per_row_);
  }
  const std::byte* bytes_of(std::int64_t row) const noexcept {
    return reinterpret_cast<const std::byte*>(rows_.data() + static_cast<std::size_t>(row) * words_per_row_);
  }
  // fp32 rows are updated in place; other types through scratch_.
  float* fp32_row(std::int64_t row) noexcept { return rows_.data() + static_cast<std::size_t>(row) * words_per_row_; }

  int threads_;
  OwnedKeys owned_;
  std::int32_t dim_;
  std::int32_t state_width_;
  std::size_t row_width_;  // dim + state
  kv::ValueType type_;
  std::size_t words_per_row_;
  // The rows: a table far larger than the caches read at random, on 2 MiB pages where the kernel
  // gives them (core/huge_page_allocator.hpp): with 4 KiB pages every row read also misses the TLB.
  HugePageVector<float> storage_;  // empty when the rows live in a RowMemory
  std::span<float> rows_;          // storage_, or the RowMemory's
  std::int64_t reads_ = 0;
  std::vector<float> scratch_;         // one row, decoded
  std::vector<std::uint8_t> touched_;  // Global update: rows the step touched
  std::vector<std::uint64_t> order_, order_scratch_;
  std::vector<std::size_t> radix_count_;  // rows_in_order's buckets, kept across steps
};

}  // namespace embscale::embedding
