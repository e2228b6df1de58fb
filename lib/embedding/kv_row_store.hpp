// KvRowStore: a layer's rows in the dynamic KV table (kv::KvTable<int64_t>, the HierarchicalKV /
// dynamicemb design): a key is inserted on its first read in training, capacity limits evict by
// score, and the optimizer state lives beside the row (optimizer_state_width).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "embedding/row_store.hpp"
#include "kv/kv_table.hpp"

namespace embscale::embedding {

// Adds what one table call did on `keys` keys to `counters`.
void count_call(StoreCounters& counters, const kv::CallStats& stats, std::size_t keys);
// The error for a table whose safe_check_mode ERROR refused keys of a call on `keys` keys (`e`):
// bad input naming the storage `field`'s max_capacity, which cannot hold one batch's distinct keys.
InputError capacity_error(const std::string& field, std::size_t keys, std::int64_t capacity, const Error& e);
// What one table call did, as the eviction study sees it; `hits`: keys the evicting tier held.
kv::CallOutcome call_outcome(const kv::CallStats& stats, std::int64_t hits);

class KvRowStore final : public RowStore {
 public:
  // `options` are complete (dim, optimizer_state_width, seed, num_embeddings set). `field` is the
  // config path of the layer's storage block, named when safe_check_mode ERROR refuses keys.
  // `context`: where the table's calls run (kv::KvTable::set_execution_context, which refuses
  // one the host table cannot serve).
  KvRowStore(const kv::TableOptions& options, std::string field, ExecutionContext context = {});

  std::int32_t dim() const noexcept override { return dim_; }
  std::int32_t state_width() const noexcept override { return state_width_; }
  std::int64_t size() const override { return table_->size(); }
  ExecutionContext execution_context() const override { return table_->execution_context(); }
  void read(std::span<const Key> keys, std::span<float> rows) override;
  void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
             std::int64_t step) override;
  bool row(Key key, std::span<float> out) const override;
  void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const override;
  StoreCounters take_counters() override;
  std::int64_t evicting_capacity() const override { return table_->options().max_capacity; }
  void for_each_evicting_key(const std::function<void(Key)>& visit) const override;
  void set_access_observer(kv::AccessObserver* observer) override { observer_ = observer; }
  void set_score_clock(std::uint32_t epoch, std::uint64_t score) override {
    table_->set_epoch(epoch);
    table_->set_score(score);
    if (observer_) observer_->on_score_clock(epoch, score);
  }
  void set_evaluating(bool evaluating) override { evaluating_ = evaluating; }

  const kv::TableOptions* table_options() const override { return &table_->options(); }
  void dump_table(const std::filesystem::path& path) const override { table_->dump(path); }
  std::vector<TableClock> save_checkpoint(const std::filesystem::path& stem) const override;
  void load_checkpoint(const std::filesystem::path& stem, std::span<const TableClock> clocks) override;
  kv::DumpImage dump_incremental_image(std::uint64_t threshold) const override {
    return table_->dump_incremental_image(threshold);
  }
  void continue_scores(std::uint64_t score_now) override { table_->continue_scores(score_now); }
  kv::CallStats restore_entries(std::span<const Key> keys, std::span<const float> rows,
                                std::span<const std::uint64_t> scores) override {
    return table_->restore(keys, rows, scores);
  }

  const kv::KvTable<std::int64_t>& table() const noexcept { return *table_; }
  kv::KvTable<std::int64_t>& table() noexcept { return *table_; }

 private:
  void update_untouched_rows(std::span<const Key> touched, const SparseOptimizer& optimizer, std::int64_t step);

  std::unique_ptr<kv::KvTable<std::int64_t>> table_;
  std::string field_;
  bool evaluating_ = false;  // reads find, never insert (set_evaluating)
  std::int32_t dim_;
  std::int32_t state_width_;
  std::size_t row_width_;
  StoreCounters counters_;
  kv::AccessObserver* observer_ = nullptr;
  std::vector<float> full_rows_;  // scratch: keys x row_width
  std::vector<std::uint8_t> founds_;
};

}  // namespace embscale::embedding
