#include "embedding/kv_row_store.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "kv/host_kv_table.hpp"
#include "kv/initializer.hpp"

namespace embscale::embedding {

KvRowStore::KvRowStore(const kv::TableOptions& options, std::string field, ExecutionContext context)
    : table_(std::make_unique<kv::HostKvTable<std::int64_t>>(options)), field_(std::move(field)),
      dim_(static_cast<std::int32_t>(options.dim)),
      state_width_(options.training ? static_cast<std::int32_t>(options.optimizer_state_width) : 0),
      row_width_(static_cast<std::size_t>(table_->row_width())) {
  require_host_context(context, field_ + ": the host KV table");
  table_->set_execution_context(context);
}

void count_call(StoreCounters& counters, const kv::CallStats& stats, std::size_t keys) {
  counters.hits += stats.found;
  counters.misses += static_cast<std::int64_t>(keys) - stats.found;
  counters.inserts += stats.inserted;
  counters.evictions += stats.evicted;
  counters.refused += stats.refused;
  counters.not_admitted += stats.not_admitted;
}

InputError capacity_error(const std::string& field, std::size_t keys, std::int64_t capacity, const Error& e) {
  return InputError(field + ".max_capacity: too small for one batch's distinct keys on this rank (" +
                    std::to_string(keys) + " keys, capacity " + std::to_string(capacity) +
                    ", safe_check_mode ERROR): " + e.what());
}

kv::CallOutcome call_outcome(const kv::CallStats& stats, std::int64_t hits) {
  return {hits, stats.inserted, stats.evicted, stats.refused, stats.not_admitted};
}

void KvRowStore::read(std::span<const Key> keys, std::span<float> rows) {
  // dim_ >= 1 (the table's options): through uint32, so that no path of the cast looks negative.
  const std::size_t dim = static_cast<std::uint32_t>(dim_);
  EMBSCALE_EXPECTS(rows.size() == keys.size() * dim, "rows must hold keys.size() x dim values");
  full_rows_.resize(keys.size() * row_width_);
  if (evaluating_) {  // the held rows, the eval initializer's for the others: the table unchanged
    founds_.assign(keys.size(), 0);
    table_->find(keys, full_rows_, founds_);
    const kv::TableOptions& o = table_->options();
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto row = rows.subspan(i * dim, dim);
      if (founds_[i]) std::copy_n(full_rows_.data() + i * row_width_, dim, row.begin());
      else
        kv::initial_row(o.eval_initializer, o.seed, o.num_embeddings, static_cast<std::uint64_t>(keys[i]), dim_, row);
    }
    return;
  }
  kv::CallStats stats;
  try {
    stats = table_->find_or_insert(keys, full_rows_);
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    // safe_check_mode ERROR: the capacity cannot hold this batch's distinct keys. That is a
    // property of the config, so it is reported as bad input naming the fields to change.
    if (table_->options().safe_check != kv::SafeCheck::kError) throw;
    throw capacity_error(field_, keys.size(), table_->capacity(), e);
  }
  count_call(counters_, stats, keys.size());
  if (observer_) observer_->on_call(keys, call_outcome(stats, stats.found));
  for (std::size_t i = 0; i < keys.size(); ++i)
    std::copy_n(full_rows_.data() + i * row_width_, dim, rows.data() + i * dim);
}

void KvRowStore::apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
                       std::int64_t step) {
  const auto dim = static_cast<std::size_t>(dim_);
  EMBSCALE_EXPECTS(grads.size() == keys.size() * dim, "grads must hold keys.size() x dim values");
  EMBSCALE_EXPECTS(optimizer.state_width() == state_width_, "the store was made for this optimizer's state width");
  full_rows_.resize(keys.size() * row_width_);
  founds_.assign(keys.size(), 0);
  table_->find(keys, full_rows_, founds_);
  // Only the keys still held: one evicted since its read has lost its row, and its gradient.
  std::size_t kept = 0;
  std::vector<Key> held;
  held.reserve(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (!founds_[i]) continue;
    float* full = full_rows_.data() + i * row_width_;
    optimizer.update(std::span<float>(full, dim), std::span<float>(full + dim, row_width_ - dim),
                     grads.subspan(i * dim, dim), step);
    if (kept != i) std::copy_n(full, row_width_, full_rows_.data() + kept * row_width_);
    held.push_back(keys[i]);
    ++kept;
  }
  table_->assign(held, std::span<const float>(full_rows_.data(), kept * row_width_));
  if (optimizer.update_type() == UpdateType::kGlobal && optimizer.changes_untouched_rows())
    update_untouched_rows(keys, optimizer, step);
}

void KvRowStore::update_untouched_rows(std::span<const Key> touched, const SparseOptimizer& optimizer,
                                       std::int64_t step) {
  std::vector<Key> sorted(touched.begin(), touched.end());
  std::sort(sorted.begin(), sorted.end());
  kv::Entries<std::int64_t> entries;
  const std::int64_t chunk = 1 << 16;
  const auto dim = static_cast<std::size_t>(dim_);
  for (std::int64_t offset = 0; offset < table_->capacity(); offset += chunk) {
    table_->export_batch(offset, chunk, entries);
    std::vector<Key> keys;
    std::vector<float> rows;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      if (std::binary_search(sorted.begin(), sorted.end(), entries.keys[i])) continue;
      float* full = entries.values.data() + i * row_width_;
      optimizer.update_untouched(std::span<float>(full, dim), std::span<float>(full + dim, row_width_ - dim), step);
      keys.push_back(entries.keys[i]);
      rows.insert(rows.end(), full, full + row_width_);
    }
    table_->assign(keys, rows);
  }
}

bool KvRowStore::row(Key key, std::span<float> out) const {
  EMBSCALE_EXPECTS(out.size() == static_cast<std::size_t>(dim_), "out must hold dim values");
  std::vector<float> full(row_width_);
  std::uint8_t found = 0;
  table_->find(std::span<const Key>(&key, 1), full, std::span<std::uint8_t>(&found, 1));
  if (found) std::copy_n(full.begin(), out.size(), out.begin());
  return found != 0;
}

void KvRowStore::for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const {
  kv::Entries<std::int64_t> entries;
  const std::int64_t chunk = 1 << 16;
  for (std::int64_t offset = 0; offset < table_->capacity(); offset += chunk) {
    table_->export_batch(offset, chunk, entries);
    for (std::size_t i = 0; i < entries.size(); ++i)
      visit(entries.keys[i],
            std::span<const float>(entries.values).subspan(i * row_width_, static_cast<std::size_t>(dim_)));
  }
}

void KvRowStore::for_each_evicting_key(const std::function<void(Key)>& visit) const {
  kv::Entries<std::int64_t> entries;
  const std::int64_t chunk = 1 << 16;
  for (std::int64_t offset = 0; offset < table_->capacity(); offset += chunk) {
    table_->export_batch(offset, chunk, entries);
    for (const Key key : entries.keys) visit(key);
  }
}

StoreCounters KvRowStore::take_counters() {
  const StoreCounters c = counters_;
  counters_ = {};
  return c;
}

}  // namespace embscale::embedding

namespace embscale::embedding {

std::vector<RowStore::TableClock> KvRowStore::save_checkpoint(const std::filesystem::path& stem) const {
  table_->dump(std::filesystem::path(stem.string() + ".kv"));
  return {{table_->capacity(), table_->get_score()}};
}

void KvRowStore::load_checkpoint(const std::filesystem::path& stem, std::span<const TableClock> clocks) {
  const std::filesystem::path path(stem.string() + ".kv");
  if (clocks.size() != 1)
    throw InputError(path.string() + ": the checkpoint keeps " + std::to_string(clocks.size()) +
                     " table clocks for this layer; its dynamic table has one");
  // The saved table's bucket count first, so that every key lands in the bucket it had: eviction
  // picks within a bucket, and a table bucketed otherwise would evict other keys.
  table_->clear();
  table_->reserve(clocks.front().capacity);
  if (table_->capacity() != clocks.front().capacity)
    throw InputError(path.string() + ": the saved table had " + std::to_string(clocks.front().capacity) +
                     " slots; one of these options has " + std::to_string(table_->capacity()) +
                     " (another capacity or bucket size)");
  const kv::LoadStats stats = table_->load(path);
  if (stats.refused + stats.evicted != 0 || table_->capacity() != clocks.front().capacity)
    throw InputError(path.string() + ": " + std::to_string(stats.entries) +
                     " saved entries did not all fit back in the table (refused " + std::to_string(stats.refused) +
                     ", evicted " + std::to_string(stats.evicted) + "): not the table that saved them");
  table_->continue_scores(clocks.front().score_now);
}

}  // namespace embscale::embedding
