// Dump and load of the tiered tables (CachingTable, HybridTable) in the one table file format
// (table_file.hpp, table_file_format.hpp): a dump holds the entries of both tiers as one table's,
// so it loads into a HostKvTable or into a tiered table of either kind, and back.
//
// Dump: the entries of both tiers (each key in one tier: no duplicates), rows in the fast tier's
// value type, written atomically like table_file's dump (a temporary name renamed over `path`).
// Tiered calls are made one at a time, so the two tiers form a consistent snapshot. Full dumps
// only (an incremental dump of a tiered table would need the tiers' scores on one clock).
// Load: validated whole and checked against the table first (table_file's rules, naming the
// field), then restored with exactly the file's scores (CachingTable::restore: the fast tier
// first, its evictions demoted; HybridTable::restore: each entry to the tier its hash places it).
#pragma once

#include <filesystem>

#include "kv/caching_table.hpp"
#include "kv/hybrid_table.hpp"
#include "kv/kv_table.hpp"

namespace embscale::kv {

void dump(const CachingTable& table, KeyType key_type, const std::filesystem::path& path);
void dump(const HybridTable& table, KeyType key_type, const std::filesystem::path& path);
LoadStats load(CachingTable& table, KeyType key_type, const std::filesystem::path& path);
LoadStats load(HybridTable& table, KeyType key_type, const std::filesystem::path& path);

}  // namespace embscale::kv
