// Server-side save and load (Paddle's documentation: "each machine of parameter servers will only save and load
// part of the whole table"). Server i of S writes its shard, alone, to
// <directory>/shard-<i>-of-<S>.kv in the KV table's dump format (kv/table_file.hpp: atomic, a
// temporary file renamed over the name; checksummed). A directory saved by S servers loads into
// S' servers: with S' = S each server loads its own file; otherwise each reads every file and
// restores, with their exact scores, the entries that hash to it now (ps_messages.hpp:
// server_of). Each file is validated whole before any entry is restored.
#pragma once

#include <cstdint>
#include <filesystem>

#include "embedding/row_store.hpp"
#include "kv/kv_table.hpp"

namespace embscale::ps {

std::filesystem::path shard_path(const std::filesystem::path& directory, int server, int servers);

// Writes server `server` of `servers`' shard (creates the directory when missing). The shard is a
// KV table, or a server's store (the KV table or a tiered one: RowStore::dump_table; an Error for
// a static store).
void save_shard(const kv::KvTable<std::int64_t>& shard, const std::filesystem::path& directory, int server,
                int servers);
void save_shard(const embedding::RowStore& shard, const std::filesystem::path& directory, int server, int servers);

// What load_shard did: the saved server count, and the table's counts summed over the files read.
struct ShardLoad {
  int saved_servers = 0;
  std::int64_t files_read = 0;
  std::int64_t entries_read = 0;  // in those files
  std::int64_t entries_kept = 0;  // restored here (the ones that hash to this server)
  std::int64_t evicted = 0, refused = 0;
};

// Loads this server's part of the shards in `directory` into `shard`. The saved count is the
// directory's: exactly one complete set shard-0..S-1-of-S. InputError, naming the directory and
// the files, when there is none, when shards of two counts are there, or when one is missing;
// a file that does not load into `shard` (kv's rules) names its path and the field.
ShardLoad load_shard(kv::KvTable<std::int64_t>& shard, const std::filesystem::path& directory, int server, int servers);
ShardLoad load_shard(embedding::RowStore& shard, const std::filesystem::path& directory, int server, int servers);

}  // namespace embscale::ps
