// KeyedKvTable<Key, Table>: KvTable<Key> over a table of uint64 keys (HostTable, the CPU table;
// PortableTable, the GPU table's logic on the host), which stores every key as its uint64 bit
// pattern: an int64 key k is the uint64 with k's two's-complement bits, so the reserved int64
// keys -3 .. -1 are the reserved uint64 keys 2^64-3 .. 2^64-1. A Table has HostTable's calls and
// kv/table_file.hpp's dump, dump_incremental and load for it.
//
// Its instances: HostKvTable<Key> (the CPU table), PortableKvTable<Key> (the GPU table's logic on
// the host) and DeviceKvTable<Key> (the GPU table).
#pragma once

#include "kv/device_table.hpp"
#include "kv/host_table.hpp"
#include "kv/kv_table.hpp"
#include "kv/portable_table.hpp"

namespace embscale::kv {

template <TableKey Key, class Table> class KeyedKvTable final : public KvTable<Key> {
 public:
  using typename KvTable<Key>::KeySpan;
  using typename KvTable<Key>::ScoreSpan;

  explicit KeyedKvTable(TableOptions options) : table_(std::move(options)) {}

  Table& table() noexcept { return table_; }
  const Table& table() const noexcept { return table_; }

  const TableOptions& options() const override { return table_.options(); }
  std::int64_t row_width() const override { return table_.row_width(); }
  std::int64_t size() const override { return table_.size(); }
  std::int64_t capacity() const override { return table_.capacity(); }
  double load_factor() const override { return table_.load_factor(); }
  void reserve(std::int64_t capacity) override { table_.reserve(capacity); }
  void clear() override { table_.clear(); }

  CallStats find(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds,
                 std::span<std::uint64_t> scores = {}) const override;
  CallStats find_and_update(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds) override;
  void contains(KeySpan keys, std::span<std::uint8_t> founds) const override;
  CallStats insert_or_assign(KeySpan keys, std::span<const float> values, ScoreSpan scores = {}) override;
  CallStats insert_and_evict(KeySpan keys, std::span<const float> values, ScoreSpan scores,
                             Entries<Key>& evicted) override;
  CallStats find_or_insert(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds = {},
                           ScoreSpan scores = {}) override;
  CallStats assign(KeySpan keys, std::span<const float> values) override;
  CallStats assign_scores(KeySpan keys, ScoreSpan scores) override;
  CallStats accum_or_assign(KeySpan keys, std::span<const float> values, std::span<const std::uint8_t> accumulate,
                            ScoreSpan scores = {}) override;
  CallStats restore(KeySpan keys, std::span<const float> values, ScoreSpan scores,
                    Entries<Key>* evicted = nullptr) override;
  CallStats erase(KeySpan keys) override;
  std::int64_t erase_if(const std::function<bool(Key key, std::uint64_t score)>& predicate) override;
  std::int64_t export_batch(std::int64_t offset, std::int64_t count, Entries<Key>& out) const override;
  std::int64_t export_batch_if(std::uint64_t threshold, Entries<Key>& out) const override;

  void dump(const std::filesystem::path& path) const override;
  std::uint64_t dump_incremental(const std::filesystem::path& path, std::uint64_t threshold) const override;
  DumpImage dump_incremental_image(std::uint64_t threshold) const override;
  LoadStats load(const std::filesystem::path& path) override;

  std::uint64_t get_score() const override { return table_.get_score(); }
  void set_score(std::uint64_t score) override { table_.set_score(score); }
  void set_epoch(std::uint32_t epoch) override { table_.set_epoch(epoch); }
  void continue_scores(std::uint64_t score_now) override { table_.continue_scores(score_now); }
  void set_execution_context(ExecutionContext context) override { table_.set_execution_context(context); }
  const ExecutionContext& execution_context() const override { return table_.execution_context(); }

 private:
  Table table_;
};

template <TableKey Key> using HostKvTable = KeyedKvTable<Key, HostTable>;
template <TableKey Key> using PortableKvTable = KeyedKvTable<Key, PortableTable>;
template <TableKey Key> using DeviceKvTable = KeyedKvTable<Key, DeviceTable>;

// The uint64 view of a key span (an int64 and a uint64 may alias: [basic.lval]).
template <TableKey Key> std::span<const std::uint64_t> as_stored_keys(std::span<const Key> keys) noexcept {
  return {reinterpret_cast<const std::uint64_t*>(keys.data()), keys.size()};
}

// Moves entries with stored (uint64) keys into entries of Key, appending.
template <TableKey Key> void append_entries(Entries<std::uint64_t>&& from, Entries<Key>& to);

extern template class KeyedKvTable<std::int64_t, HostTable>;
extern template class KeyedKvTable<std::uint64_t, HostTable>;
extern template class KeyedKvTable<std::int64_t, PortableTable>;
extern template class KeyedKvTable<std::uint64_t, PortableTable>;
extern template class KeyedKvTable<std::int64_t, DeviceTable>;
extern template class KeyedKvTable<std::uint64_t, DeviceTable>;

}  // namespace embscale::kv
