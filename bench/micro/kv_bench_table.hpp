// The embscale side of the KV table benchmarks: a HostTable of HierarchicalKV's benchmark
// options (LRU scores: kTimestamp), filled to a load factor, and put back to that content after
// each timed write (HostTable is not copyable, so a write benchmark restores the one table
// instead of copying a fresh one per iteration).
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kv/host_table.hpp"
#include "kv_bench_workload.hpp"

namespace embscale::kv_bench {

// Below this many keys a call runs on the caller's thread; every benchmark batch is above it.
inline constexpr std::int64_t kMinKeysForThreads = 1024;
// HierarchicalKV's fill stops within this of the target load factor (its EPSILON); a full
// table (1.0) is filled to at least 1 - kFillEpsilon, inserts evicting all the way.
inline constexpr double kFillEpsilon = 0.001;

inline kv::TableOptions table_options(std::size_t dim, Scale scale) {
  kv::TableOptions o;
  o.dim = static_cast<std::int64_t>(dim);
  o.max_capacity = static_cast<std::int64_t>(scale.capacity());
  o.init_capacity = o.max_capacity;  // no growth: the load factor is the content's
  o.bucket_capacity = scale.bucket_capacity;
  o.score_strategy = kv::ScoreStrategy::kTimestamp;  // HierarchicalKV's benchmark: LRU
  o.training = true;  // find_or_insert inserts; optimizer_state_width 0: a row is dim values
  // New keys of find_or_insert take a constant row (the peers call the same initial_row).
  o.initializer = {kv::InitializerMode::kConstant, 0.0, 1.0, 0.0, 0.0, 0.5, {}};
  return o;
}

// A HostTable at the workload's load factor, and how to bring it back there.
class TableSide {
 public:
  // Fills a table as HierarchicalKV's benchmark does: batches of new keys until the load factor
  // is within kFillEpsilon of the target (at 1.0, inserts into full buckets evict the oldest).
  TableSide(std::size_t dim, double load_factor, Scale scale)
      : table_(std::make_unique<kv::HostTable>(table_options(dim, scale))) {
    const auto capacity = static_cast<double>(scale.capacity());
    const auto target = static_cast<std::int64_t>(std::min(load_factor, 1.0 - kFillEpsilon) * capacity);
    table_->set_execution_context({2, kMinKeysForThreads});
    std::vector<std::uint64_t> keys;
    std::vector<float> rows;
    while (table_->size() < target) {
      const auto n =
          load_factor >= 1.0 ? scale.batch : std::min(scale.batch, static_cast<std::size_t>(target - table_->size()));
      keys.resize(n);
      rows.resize(n * dim);
      for (std::size_t i = 0; i < n; ++i) {
        keys[i] = nth_key(offered_++);
        fill_row(keys[i], std::span(rows).subspan(i * dim, dim));
      }
      table_->insert_or_assign(keys, rows);
    }
  }

  // The write batch's present keys become the most recently used (assign_scores refreshes a
  // timestamp), as every timed write leaves them: a full table's inserts then evict older keys
  // (HierarchicalKV's benchmark gets the same by putting the hits before the new keys), never a
  // present key of the batch before the batch reaches it.
  void touch_hits(const Workload& w) {
    std::vector<std::uint64_t> hits;
    for (std::size_t i = 0; i < w.write_keys.size(); ++i)
      if (!w.is_new[i]) hits.push_back(w.write_keys[i]);
    table_->assign_scores(hits, {});
  }

  kv::HostTable& table() noexcept { return *table_; }
  std::uint64_t offered() const noexcept { return offered_; }

  // The present keys, in slot order.
  std::vector<std::uint64_t> export_keys() const {
    std::vector<std::uint64_t> content, keys, scores;
    std::vector<float> values;
    constexpr std::int64_t kSlots = 1 << 14;
    for (std::int64_t at = 0; at < table_->capacity(); at += kSlots) {
      table_->export_batch(at, kSlots, keys, values, scores);
      content.insert(content.end(), keys.begin(), keys.end());
    }
    return content;
  }

  // After a timed write of w's write batch: erases its new keys and puts back the present keys
  // it evicted (rows row_value, score 0: the oldest). `evicted`: what the call reported. Throws
  // when the table does not come back to the content.
  void restore(const Workload& w, std::int64_t evicted) {
    const auto context = table_->execution_context();
    table_->set_execution_context({2, kMinKeysForThreads});
    table_->erase(w.new_keys);
    if (evicted > 0) {
      founds_.resize(w.content.size());
      table_->contains(w.content, founds_);
      std::vector<std::uint64_t> missing;
      for (std::size_t j = 0; j < w.content.size(); ++j)
        if (!founds_[j]) missing.push_back(w.content[j]);
      std::vector<float> rows(missing.size() * w.dim);
      for (std::size_t i = 0; i < missing.size(); ++i) fill_row(missing[i], std::span(rows).subspan(i * w.dim, w.dim));
      const std::vector<std::uint64_t> scores(missing.size(), 0);
      table_->restore(missing, rows, scores);
    }
    table_->set_execution_context(context);
    if (table_->size() != static_cast<std::int64_t>(w.content.size()))
      throw std::runtime_error("kv_bench: the table holds " + std::to_string(table_->size()) +
                               " keys after a reset, not " + std::to_string(w.content.size()));
  }

 private:
  std::unique_ptr<kv::HostTable> table_;
  std::uint64_t offered_ = 0;  // nth_key indices used by the fill
  std::vector<std::uint8_t> founds_;
};

}  // namespace embscale::kv_bench
