#include "kv/tiered_file.hpp"

#include <algorithm>
#include <optional>
#include <string>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "kv/row_codec.hpp"
#include "kv/table_file.hpp"
#include "kv/table_file_format.hpp"

namespace embscale::kv {
namespace {

template <class Tiered> void dump_tiered(const Tiered& table, KeyType key_type, const std::filesystem::path& path) {
  check_file_can_be_created(path, "the table dump");
  const TableOptions& o = table.options();
  const auto width = static_cast<std::size_t>(table.row_width());
  const std::size_t row_bytes = width * value_bytes(o.value_type);
  TableFileHeader header = dump_header(o, table.row_width(), key_type);
  header.entry_count = table.size();

  AtomicFile out(path);
  TableFileEncoder encoder(header);
  out.write(encoder.header());
  // The tiers' batches are re-cut into chunks of chunk_entries (every chunk full but the last).
  std::vector<std::uint64_t> keys, scores;
  std::vector<std::byte> rows;
  std::int64_t written = 0;
  const auto flush = [&] {
    out.write(encoder.chunk(keys, scores, rows));
    written += static_cast<std::int64_t>(keys.size());
    keys.clear();
    scores.clear();
    rows.clear();
  };
  table.for_each_entry(
      [&](std::span<const std::uint64_t> k, std::span<const float> v, std::span<const std::uint64_t> s) {
        for (std::size_t i = 0; i < k.size(); ++i) {
          keys.push_back(k[i]);
          scores.push_back(s[i]);
          rows.resize(rows.size() + row_bytes);
          encode_values(o.value_type, v.data() + i * width, rows.data() + rows.size() - row_bytes, width);
          if (static_cast<std::int64_t>(keys.size()) == header.chunk_entries) flush();
        }
      });
  if (!keys.empty()) flush();
  if (written != header.entry_count)
    throw Error("dump of a tiered table: its tiers held " + std::to_string(written) + " entries, its size said " +
                std::to_string(header.entry_count));
  out.write(encoder.trailer());
  out.commit();
}

template <class Tiered> LoadStats load_tiered(Tiered& table, KeyType key_type, const std::filesystem::path& path) {
  const TableFileContents contents = read_dump(path, table.options(), table.row_width(), key_type);
  return load_stats(contents, table.restore(contents.keys, contents.values, contents.scores));
}

}  // namespace

void dump(const CachingTable& table, KeyType key_type, const std::filesystem::path& path) {
  dump_tiered(table, key_type, path);
}
void dump(const HybridTable& table, KeyType key_type, const std::filesystem::path& path) {
  dump_tiered(table, key_type, path);
}
LoadStats load(CachingTable& table, KeyType key_type, const std::filesystem::path& path) {
  return load_tiered(table, key_type, path);
}
LoadStats load(HybridTable& table, KeyType key_type, const std::filesystem::path& path) {
  return load_tiered(table, key_type, path);
}

}  // namespace embscale::kv
