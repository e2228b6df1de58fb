#include "kv/keyed_kv_table.hpp"

#include <utility>

#include "kv/table_file.hpp"

namespace embscale::kv {

template <TableKey Key> void append_entries(Entries<std::uint64_t>&& from, Entries<Key>& to) {
  if constexpr (std::same_as<Key, std::uint64_t>) {
    if (to.keys.empty()) {
      to = std::move(from);
      return;
    }
  }
  to.keys.reserve(to.keys.size() + from.keys.size());
  for (const std::uint64_t k : from.keys) to.keys.push_back(static_cast<Key>(k));  // bits kept
  to.values.insert(to.values.end(), from.values.begin(), from.values.end());
  to.scores.insert(to.scores.end(), from.scores.begin(), from.scores.end());
}

template void append_entries(Entries<std::uint64_t>&&, Entries<std::int64_t>&);
template void append_entries(Entries<std::uint64_t>&&, Entries<std::uint64_t>&);

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::find(KeySpan keys, std::span<float> values, std::span<std::uint8_t> founds,
                                         std::span<std::uint64_t> scores) const {
  return table_.find(as_stored_keys(keys), values, founds, scores);
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::find_and_update(KeySpan keys, std::span<float> values,
                                                    std::span<std::uint8_t> founds) {
  return table_.find_and_update(as_stored_keys(keys), values, founds);
}

template <TableKey Key, class Table>
void KeyedKvTable<Key, Table>::contains(KeySpan keys, std::span<std::uint8_t> founds) const {
  table_.contains(as_stored_keys(keys), founds);
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::insert_or_assign(KeySpan keys, std::span<const float> values, ScoreSpan scores) {
  return table_.insert_or_assign(as_stored_keys(keys), values, scores);
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::insert_and_evict(KeySpan keys, std::span<const float> values, ScoreSpan scores,
                                                     Entries<Key>& evicted) {
  Evicted stored;
  const CallStats stats = table_.insert_and_evict(as_stored_keys(keys), values, scores, stored);
  append_entries(std::move(stored), evicted);
  return stats;
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::find_or_insert(KeySpan keys, std::span<float> values,
                                                   std::span<std::uint8_t> founds, ScoreSpan scores) {
  return table_.find_or_insert(as_stored_keys(keys), values, founds, scores);
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::assign(KeySpan keys, std::span<const float> values) {
  return table_.assign(as_stored_keys(keys), values);
}

template <TableKey Key, class Table> CallStats KeyedKvTable<Key, Table>::assign_scores(KeySpan keys, ScoreSpan scores) {
  return table_.assign_scores(as_stored_keys(keys), scores);
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::accum_or_assign(KeySpan keys, std::span<const float> values,
                                                    std::span<const std::uint8_t> accumulate, ScoreSpan scores) {
  return table_.accum_or_assign(as_stored_keys(keys), values, accumulate, scores);
}

template <TableKey Key, class Table>
CallStats KeyedKvTable<Key, Table>::restore(KeySpan keys, std::span<const float> values, ScoreSpan scores,
                                            Entries<Key>* evicted) {
  if (!evicted) return table_.restore(as_stored_keys(keys), values, scores, nullptr);
  Evicted stored;
  const CallStats stats = table_.restore(as_stored_keys(keys), values, scores, &stored);
  append_entries(std::move(stored), *evicted);
  return stats;
}

template <TableKey Key, class Table> CallStats KeyedKvTable<Key, Table>::erase(KeySpan keys) {
  return table_.erase(as_stored_keys(keys));
}

template <TableKey Key, class Table>
std::int64_t KeyedKvTable<Key, Table>::erase_if(const std::function<bool(Key key, std::uint64_t score)>& predicate) {
  return table_.erase_if(
      [&](std::uint64_t key, std::uint64_t score) { return predicate(static_cast<Key>(key), score); });
}

template <TableKey Key, class Table>
std::int64_t KeyedKvTable<Key, Table>::export_batch(std::int64_t offset, std::int64_t count, Entries<Key>& out) const {
  Entries<std::uint64_t> stored;
  table_.export_batch(offset, count, stored.keys, stored.values, stored.scores);
  out.clear();
  append_entries(std::move(stored), out);
  return static_cast<std::int64_t>(out.size());
}

template <TableKey Key, class Table>
std::int64_t KeyedKvTable<Key, Table>::export_batch_if(std::uint64_t threshold, Entries<Key>& out) const {
  Entries<std::uint64_t> stored;
  table_.export_batch_if(threshold, stored.keys, stored.values, stored.scores);
  out.clear();
  append_entries(std::move(stored), out);
  return static_cast<std::int64_t>(out.size());
}

template <TableKey Key, class Table> void KeyedKvTable<Key, Table>::dump(const std::filesystem::path& path) const {
  kv::dump(table_, key_type_of<Key>, path);
}

template <TableKey Key, class Table>
std::uint64_t KeyedKvTable<Key, Table>::dump_incremental(const std::filesystem::path& path,
                                                         std::uint64_t threshold) const {
  return kv::dump_incremental(table_, key_type_of<Key>, path, threshold);
}

template <TableKey Key, class Table>
DumpImage KeyedKvTable<Key, Table>::dump_incremental_image(std::uint64_t threshold) const {
  return kv::dump_incremental_image(table_, key_type_of<Key>, threshold);
}

template <TableKey Key, class Table> LoadStats KeyedKvTable<Key, Table>::load(const std::filesystem::path& path) {
  return kv::load(table_, key_type_of<Key>, path);
}

template class KeyedKvTable<std::int64_t, HostTable>;
template class KeyedKvTable<std::uint64_t, HostTable>;
template class KeyedKvTable<std::int64_t, PortableTable>;
template class KeyedKvTable<std::uint64_t, PortableTable>;
template class KeyedKvTable<std::int64_t, DeviceTable>;
template class KeyedKvTable<std::uint64_t, DeviceTable>;

}  // namespace embscale::kv
