#include "ps/shard_files.hpp"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <system_error>

#include "core/error.hpp"
#include "kv/table_file.hpp"
#include "ps/ps_messages.hpp"

namespace embscale::ps {
namespace {

// "shard-<i>-of-<S>.kv" -> (i, S); nullopt for any other name.
std::optional<std::pair<int, int>> parse_shard_name(const std::string& name) {
  int server = -1, servers = -1, used = 0;
  if (std::sscanf(name.c_str(), "shard-%d-of-%d.kv%n", &server, &servers, &used) != 2) return std::nullopt;
  if (used != static_cast<int>(name.size()) || servers < 1 || server < 0 || server >= servers) return std::nullopt;
  if (name != shard_path("", server, servers).string()) return std::nullopt;  // no leading zeros or signs
  return std::make_pair(server, servers);
}

// The directory's one complete set of shards: its server count.
int saved_server_count(const std::filesystem::path& directory) {
  std::error_code error;
  std::filesystem::directory_iterator it(directory, error);
  if (error) throw InputError(directory.string() + ": cannot read the saved shards: " + error.message());
  std::map<int, std::set<int>> found;  // server count -> servers present
  for (const auto& entry : it)
    if (const auto parsed = parse_shard_name(entry.path().filename().string()))
      found[parsed->second].insert(parsed->first);
  if (found.empty())
    throw InputError(directory.string() + ": no saved parameter-server shards (expected files shard-<i>-of-<S>.kv)");
  if (found.size() > 1) {
    std::string counts;
    for (const auto& [servers, present] : found) counts += (counts.empty() ? "" : " and ") + std::to_string(servers);
    throw InputError(directory.string() + ": holds shards saved by " + counts +
                     " servers; a directory holds one save (remove the others)");
  }
  const auto& [servers, present] = *found.begin();
  for (int i = 0; i < servers; ++i)
    if (!present.count(i))
      throw InputError(directory.string() + ": " + shard_path("", i, servers).string() + " is missing (saved by " +
                       std::to_string(servers) + " servers, every shard is needed)");
  return servers;
}

}  // namespace

std::filesystem::path shard_path(const std::filesystem::path& directory, int server, int servers) {
  return directory / ("shard-" + std::to_string(server) + "-of-" + std::to_string(servers) + ".kv");
}

namespace {

// What load needs of a shard's table, whichever holds it.
struct ShardAccess {
  const kv::TableOptions& options;
  std::int64_t row_width;
  std::function<kv::CallStats(std::span<const std::int64_t>, std::span<const float>, std::span<const std::uint64_t>)>
      restore;
  // kv::KvTable::continue_scores: later calls score on from the saving run's clock.
  std::function<void(std::uint64_t)> continue_scores;
};

ShardAccess access(kv::KvTable<std::int64_t>& table) {
  return {table.options(), table.row_width(),
          [&table](auto keys, auto values, auto scores) { return table.restore(keys, values, scores); },
          [&table](std::uint64_t score) { table.continue_scores(score); }};
}

ShardAccess access(embedding::RowStore& store) {
  const kv::TableOptions* options = store.table_options();
  if (!options) throw Error("a parameter server's shard is a dynamic table; this store is static");
  return {*options, store.dim() + store.state_width(),
          [&store](auto keys, auto values, auto scores) { return store.restore_entries(keys, values, scores); },
          [&store](std::uint64_t score) { store.continue_scores(score); }};
}

// `dump` writes the shard at the path it is given.
void save(const std::function<void(const std::filesystem::path&)>& dump, const std::filesystem::path& directory,
          int server, int servers) {
  EMBSCALE_EXPECTS(servers >= 1 && server >= 0 && server < servers, "server index within the server count");
  std::error_code error;
  std::filesystem::create_directories(directory, error);
  if (error) throw InputError(directory.string() + ": cannot create the directory for the shards: " + error.message());
  dump(shard_path(directory, server, servers));
}

// Every saved file is read and validated whole against the table (kv's rules, naming the path and
// the field), then the entries that hash to this server are restored with their exact scores: all
// of its own file's when the server count is the saved one. The table then scores on past the
// newest score of the files it read (kv::continue_scores), so that under STEP or a clock a key
// touched after the load is never older than the loaded ones.
ShardLoad load(const ShardAccess& shard, const std::filesystem::path& directory, int server, int servers) {
  EMBSCALE_EXPECTS(servers >= 1 && server >= 0 && server < servers, "server index within the server count");
  ShardLoad out;
  out.saved_servers = saved_server_count(directory);
  const bool same = out.saved_servers == servers;
  std::vector<std::int64_t> keys;
  std::vector<std::uint64_t> scores;
  std::vector<float> values;
  std::uint64_t newest = 0;  // the largest score read
  const auto width = static_cast<std::size_t>(shard.row_width);
  for (int i = 0; i < out.saved_servers; ++i) {
    if (same && i != server) continue;
    const kv::TableFileContents contents =
        kv::read_dump(shard_path(directory, i, out.saved_servers), shard.options, shard.row_width, kv::KeyType::kInt64);
    keys.clear();
    scores.clear();
    values.clear();
    for (std::size_t e = 0; e < contents.keys.size(); ++e) {
      const auto key = static_cast<std::int64_t>(contents.keys[e]);
      if (server_of(key, servers) != server) continue;
      keys.push_back(key);
      scores.push_back(contents.scores[e]);
      values.insert(values.end(), contents.values.begin() + static_cast<std::ptrdiff_t>(e * width),
                    contents.values.begin() + static_cast<std::ptrdiff_t>((e + 1) * width));
    }
    for (const auto score : contents.scores) newest = std::max(newest, score);
    const kv::CallStats stats = shard.restore(keys, values, scores);
    ++out.files_read;
    out.entries_read += static_cast<std::int64_t>(contents.keys.size());
    out.entries_kept += stats.inserted + stats.found;
    out.evicted += stats.evicted;
    out.refused += stats.refused;
  }
  if (out.entries_read > 0 && newest < ~std::uint64_t{0}) shard.continue_scores(newest + 1);
  return out;
}

}  // namespace

void save_shard(const kv::KvTable<std::int64_t>& shard, const std::filesystem::path& directory, int server,
                int servers) {
  save([&shard](const std::filesystem::path& path) { shard.dump(path); }, directory, server, servers);
}

void save_shard(const embedding::RowStore& shard, const std::filesystem::path& directory, int server, int servers) {
  save([&shard](const std::filesystem::path& path) { shard.dump_table(path); }, directory, server, servers);
}

ShardLoad load_shard(kv::KvTable<std::int64_t>& shard, const std::filesystem::path& directory, int server,
                     int servers) {
  return load(access(shard), directory, server, servers);
}

ShardLoad load_shard(embedding::RowStore& shard, const std::filesystem::path& directory, int server, int servers) {
  return load(access(shard), directory, server, servers);
}

}  // namespace embscale::ps
