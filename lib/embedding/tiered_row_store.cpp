#include "embedding/tiered_row_store.hpp"

#include <algorithm>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/error.hpp"
#include "embedding/kv_row_store.hpp"
#include "kv/caching_table.hpp"
#include "kv/hybrid_table.hpp"
#include "kv/initializer.hpp"
#include "kv/mapped_storage.hpp"
#include "kv/tiered_file.hpp"
#include "kv/value_types.hpp"

namespace embscale::embedding {
namespace {

// Every entry of a HostTable: visit(key, full row).
template <class Visit> void visit_host_table(const kv::HostTable& table, const Visit& visit) {
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> values;
  const std::int64_t chunk = 1 << 16;
  const auto width = static_cast<std::size_t>(table.row_width());
  for (std::int64_t offset = 0; offset < table.capacity(); offset += chunk) {
    table.export_batch(offset, chunk, keys, values, scores);
    for (std::size_t i = 0; i < keys.size(); ++i)
      visit(keys[i], std::span<const float>(values).subspan(i * width, width));
  }
}

template <class Visit> void visit_rows(const kv::CachingTable& table, const Visit& visit) {
  visit_host_table(table.fast(), visit);
  const auto width = static_cast<std::size_t>(table.row_width());
  table.slow().for_each(
      [&](std::span<const std::uint64_t> keys, std::span<const float> values, std::span<const std::uint64_t>) {
        for (std::size_t i = 0; i < keys.size(); ++i) visit(keys[i], values.subspan(i * width, width));
      });
}

template <class Visit> void visit_rows(const kv::HybridTable& table, const Visit& visit) {
  visit_host_table(table.fast(), visit);
  visit_host_table(table.slow(), visit);
}

template <class Table> class TieredRowStore final : public RowStore {
 public:
  TieredRowStore(std::unique_ptr<Table> table, std::int32_t dim, std::int32_t state_width)
      : table_(std::move(table)), dim_(dim), state_width_(state_width),
        row_width_(static_cast<std::size_t>(table_->row_width())) {}

  std::int32_t dim() const noexcept override { return dim_; }
  std::int32_t state_width() const noexcept override { return state_width_; }
  std::int64_t size() const override { return table_->size(); }
  ExecutionContext execution_context() const override { return ExecutionContext::host(); }

  // Evaluating, reads use the tables' find, which reads both tiers and moves nothing (no
  // promotion, no score); a key neither holds reads the eval initializer's row.
  void set_evaluating(bool evaluating) override { evaluating_ = evaluating; }
  void read(std::span<const Key> keys, std::span<float> rows) override {
    const auto dim = static_cast<std::size_t>(dim_);
    if (evaluating_) {
      read_unchanged(keys, rows);
      return;
    }
    full_.resize(keys.size() * row_width_);
    const std::int64_t slow_hits_before = slow_hits();
    const std::int64_t fast_size_before = table_->fast().size();
    const kv::CallStats stats = table_->find_or_insert(as_unsigned(keys), full_);
    count_call(counters_, stats, keys.size());
    counters_.fast_tier_misses +=
        fast_tier_misses(keys, stats, slow_hits() - slow_hits_before, table_->fast().size() - fast_size_before);
    if (observer_) observer_->on_call(keys, call_outcome(stats, stats.found - (slow_hits() - slow_hits_before)));
    for (std::size_t i = 0; i < keys.size(); ++i)
      std::copy_n(full_.data() + i * row_width_, dim, rows.data() + i * dim);
  }

  void read_unchanged(std::span<const Key> keys, std::span<float> rows) {
    const auto dim = static_cast<std::size_t>(static_cast<std::uint32_t>(dim_));  // dim_ >= 1
    full_.resize(keys.size() * row_width_);
    founds_.assign(keys.size(), 0);
    (void)std::as_const(*table_).find(as_unsigned(keys), full_, founds_);
    const kv::TableOptions& o = table_->options();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (founds_[i]) std::copy_n(full_.data() + i * row_width_, dim, rows.data() + i * dim);
      else
        kv::initial_row(o.eval_initializer, o.seed, o.num_embeddings, static_cast<std::uint64_t>(keys[i]), dim_,
                        rows.subspan(i * dim, dim));
    }
  }

  void apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
             std::int64_t step) override {
    const auto dim = static_cast<std::size_t>(dim_);
    full_.resize(keys.size() * row_width_);
    founds_.assign(keys.size(), 0);
    table_->find(as_unsigned(keys), full_, founds_);
    std::vector<std::uint64_t> held;
    std::size_t kept = 0;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (!founds_[i]) continue;  // evicted from both tiers since its read: its update is lost
      float* full = full_.data() + i * row_width_;
      optimizer.update(std::span<float>(full, dim), std::span<float>(full + dim, row_width_ - dim),
                       grads.subspan(i * dim, dim), step);
      if (kept != i) std::copy_n(full, row_width_, full_.data() + kept * row_width_);
      held.push_back(static_cast<std::uint64_t>(keys[i]));
      ++kept;
    }
    table_->insert_or_assign(held, std::span<const float>(full_.data(), kept * row_width_));
  }

  bool row(Key key, std::span<float> out) const override {
    std::vector<float> full(row_width_);
    std::uint8_t found = 0;
    const std::uint64_t k = static_cast<std::uint64_t>(key);
    table_->find(std::span<const std::uint64_t>(&k, 1), full, std::span<std::uint8_t>(&found, 1));
    if (found) std::copy_n(full.begin(), out.size(), out.begin());
    return found != 0;
  }

  void for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const override {
    visit_rows(*table_, [&](std::uint64_t key, std::span<const float> full) {
      visit(static_cast<Key>(key), full.first(static_cast<std::size_t>(dim_)));
    });
  }

  StoreCounters take_counters() override { return std::exchange(counters_, StoreCounters{}); }

  // Caching mode evicts by score from its fast tier (what the eviction study measures); hybrid
  // mode places keys by hash and has no such seam.
  const kv::TableOptions* table_options() const override { return &table_->options(); }
  void dump_table(const std::filesystem::path& path) const override { kv::dump(*table_, kv::KeyType::kInt64, path); }
  kv::CallStats restore_entries(std::span<const Key> keys, std::span<const float> rows,
                                std::span<const std::uint64_t> scores) override {
    return table_->restore(as_unsigned(keys), rows, scores);
  }

  std::int64_t evicting_capacity() const override {
    if constexpr (kCaching) return table_->fast().options().max_capacity;
    return 0;
  }
  void for_each_evicting_key(const std::function<void(Key)>& visit) const override {
    if constexpr (kCaching)
      visit_host_table(table_->fast(),
                       [&](std::uint64_t key, std::span<const float>) { visit(static_cast<Key>(key)); });
  }
  void set_access_observer(kv::AccessObserver* observer) override {
    if constexpr (kCaching) observer_ = observer;
  }

 private:
  static constexpr bool kCaching = std::is_same_v<Table, kv::CachingTable>;

  // A read's keys the fast tier did not hold. Caching: those it did not find (new or in the slow
  // tier). Hybrid: those the hash places in the slow tier, and the new keys its fast tier took.
  std::int64_t fast_tier_misses(std::span<const Key> keys, const kv::CallStats& stats, std::int64_t slow_hits,
                                std::int64_t fast_growth) const {
    if constexpr (kCaching) {
      return static_cast<std::int64_t>(keys.size()) - (stats.found - slow_hits);
    } else {
      const auto in_slow = std::count_if(
          keys.begin(), keys.end(), [&](Key key) { return !table_->in_fast_tier(static_cast<std::uint64_t>(key)); });
      return static_cast<std::int64_t>(in_slow) + fast_growth;
    }
  }

  // Keys found in the slow tier so far (caching mode): a read's hits minus these are the fast tier's.
  std::int64_t slow_hits() const {
    if constexpr (kCaching) return table_->counters().slow_hits;
    return 0;
  }

  static std::span<const std::uint64_t> as_unsigned(std::span<const Key> keys) {
    // Keys are non-negative int64 (the router checks): the same bits as uint64.
    return {reinterpret_cast<const std::uint64_t*>(keys.data()), keys.size()};
  }

  std::unique_ptr<Table> table_;
  std::int32_t dim_, state_width_;
  std::size_t row_width_;
  StoreCounters counters_;
  kv::AccessObserver* observer_ = nullptr;
  std::vector<float> full_;
  std::vector<std::uint8_t> founds_;
  bool evaluating_ = false;  // set_evaluating: reads find, moving nothing
};

}  // namespace

std::unique_ptr<RowStore> make_tiered_row_store(const kv::TableOptions& options, const TierOptions& tiers,
                                                const std::string& field, const ExecutionContext& context) {
  require_host_context(context, field + ": the tiered tables");
  const auto dim = static_cast<std::int32_t>(options.dim);
  const auto state = static_cast<std::int32_t>(options.training ? options.optimizer_state_width : 0);
  const std::int64_t row_bytes = (options.dim + state) * static_cast<std::int64_t>(kv::value_bytes(options.value_type));
  if (tiers.fast_bytes < options.bucket_capacity * row_bytes)
    throw InputError(field + ".global_hbm_for_values: expected at least one bucket of rows in the fast tier (" +
                     std::to_string(options.bucket_capacity * row_bytes) +
                     " bytes: " + std::to_string(options.bucket_capacity) + " rows of " + std::to_string(row_bytes) +
                     "), got " + std::to_string(tiers.fast_bytes));
  if (!tiers.caching) {
    kv::HybridOptions hybrid;
    hybrid.fast_row_bytes = tiers.fast_bytes;
    hybrid.slow_directory = tiers.slow_directory;
    return std::make_unique<TieredRowStore<kv::HybridTable>>(std::make_unique<kv::HybridTable>(options, hybrid), dim,
                                                             state);
  }
  // Caching: the fast tier holds what the budget allows (whole buckets), the slow tier the
  // table's max_capacity.
  kv::TableOptions fast = options;
  fast.max_capacity = std::max(options.bucket_capacity,
                               tiers.fast_bytes / row_bytes / options.bucket_capacity * options.bucket_capacity);
  fast.init_capacity = 0;
  auto slow = std::make_unique<kv::MappedStorage>(options.dim + state, options.max_capacity, tiers.slow_directory,
                                                  options.bucket_capacity);
  return std::make_unique<TieredRowStore<kv::CachingTable>>(std::make_unique<kv::CachingTable>(fast, std::move(slow)),
                                                            dim, state);
}

}  // namespace embscale::embedding
