// Dump and load of a HostTable: a versioned, checksummed file (kv/table_file_format.hpp) written
// atomically, read and validated whole before the table is touched.
//
// Atomicity. dump writes "<dir>/.<name>.tmp.<host>.<pid>.<n>" (core/temp_files.hpp: same
// directory, so the rename stays on one file system; n counts the process's dumps), fsyncs it,
// renames it over `path` and fsyncs the directory. Until the rename the previous file at `path`
// is untouched, so a process killed in the middle of a dump leaves the previous dump loadable
// (and its own temporary file, a hidden name that the next dump to `path` on that host removes).
// Of two dumps to one path at once, the last renamed wins; each file is whole. A dump that fails
// by exception removes its temporary file; while it runs the file is registered, so the
// fatal-error path (remove_registered_temp_files) removes it too.
//
// Consistency. A dump is one read call of the table (HostTable::export_stored): the entries are
// a snapshot; calls that change the table wait until the file is written (reads run alongside).
//
// Load. The whole file is read into memory and validated (every field, every checksum) and
// checked against the table (rules below) before the table changes; then its entries are put
// back in one restore call (HostTable::restore: exact scores; admission, eviction and growth as
// for an insert), so a dump loads into a table of another capacity and LoadStats says how many
// entries were refused or evicted. Entries of the table that the file does not hold stay. On any
// error the table is unchanged. Memory: the file plus its rows as float.
//
// Compatibility (load refuses, naming both sides): another key type (int64 / uint64), another
// dim, another optimizer-state width (row_width - dim: a training dump does not load into an
// evaluation table or back), another score strategy (scores of one strategy mean nothing to
// another). Accepted: any capacity, bucket size or load factor, and any value type: rows are
// converted through float (float16 / bfloat16 -> float32 exactly; float32 -> 16-bit rounds to
// nearest even, as an insert of those values would; a 16-bit signalling NaN comes back quiet).
//
// Incremental dumps write the entries whose score is >= threshold and return the threshold for
// the next one, by the strategy (its next_dump rule, kv/score_rules.hpp):
//   STEP, TIMESTAMP   get_score() under the dump's lock: every later score-setting call gives
//                     scores >= it (the step advances; the clock is monotonic), and every entry
//                     with a lower score was in this dump or below its threshold;
//   EPOCH_LRU, EPOCH_LFU  the current epoch << 32: the low 32 bits are not monotonic (a wrapping
//                     clock, a count restarting each epoch), so the next dump holds every entry
//                     touched in the current epoch or later;
//   CUSTOMIZED, LFU   the largest dumped score + 1 (saturating), or threshold when nothing was
//                     dumped: scores are the caller's or counts, not a clock, so "changed since"
//                     holds only if the caller's scores grow.
// An incremental file loads like a full one: its entries are restored onto the table's.
#pragma once

#include <cstdint>
#include <filesystem>
#include <functional>
#include <span>
#include <string>

#include "kv/host_table.hpp"
#include "kv/portable_table.hpp"
#include "kv/table_file_format.hpp"

namespace embscale::kv {

struct DumpOptions {
  std::int64_t chunk_entries = 0;  // entries per chunk; 0: about 4 MiB of chunk
  // Called after each chunk is written (chunks so far); for tests that fail or kill a dump in
  // the middle. Runs under the table's read lock.
  std::function<void(std::int64_t chunks_written)> after_chunk;
};

// HostTable stores keys as uint64: key_type (the KvTable's) goes into the file and must match on load.
void dump(const HostTable& table, KeyType key_type, const std::filesystem::path& path, const DumpOptions& options = {});
std::uint64_t dump_incremental(const HostTable& table, KeyType key_type, const std::filesystem::path& path,
                               std::uint64_t threshold, const DumpOptions& options = {});
LoadStats load(HostTable& table, KeyType key_type, const std::filesystem::path& path);

// The same for the GPU table's logic on the host (kv/portable_table.hpp): one file format, so a
// table dumped by either loads into the other.
void dump(const PortableTable& table, KeyType key_type, const std::filesystem::path& path,
          const DumpOptions& options = {});
std::uint64_t dump_incremental(const PortableTable& table, KeyType key_type, const std::filesystem::path& path,
                               std::uint64_t threshold, const DumpOptions& options = {});
LoadStats load(PortableTable& table, KeyType key_type, const std::filesystem::path& path);

// An incremental dump taken into memory: the same snapshot (one read call of the table) and the
// same bytes as dump_incremental's file, written later by write_dump_image, on any thread, without
// the table: a dump that stops training only for the copy (an online-training run's background
// dumps, lib/run/online_dumps.hpp). Memory: the file's size.
DumpImage dump_incremental_image(const HostTable& table, KeyType key_type, std::uint64_t threshold,
                                 const DumpOptions& options = {});
DumpImage dump_incremental_image(const PortableTable& table, KeyType key_type, std::uint64_t threshold,
                                 const DumpOptions& options = {});
// The image's bytes at `path`, atomically (as dump's file: temporary name, fsync, rename).
void write_dump_image(const DumpImage& image, const std::filesystem::path& path);

// load() of a file already in memory (`name` starts every error); the libFuzzer target's entry.
LoadStats load_bytes(HostTable& table, KeyType key_type, std::span<const std::byte> bytes, const std::string& name);
// Throws InputError when a file with this header cannot load into `table` (rules above).
void check_compatible(const TableFileHeader& header, const HostTable& table, KeyType key_type, const std::string& name);
// The same for a table of `options` whose rows are `row_width` values (dim and optimizer state).
void check_compatible(const TableFileHeader& header, const TableOptions& options, std::int64_t row_width,
                      KeyType key_type, const std::string& name);
// What a load did: the file's counts and header fields, and what the restore of its entries did.
LoadStats load_stats(const TableFileContents& contents, const CallStats& restored);
// The header of a full dump of a table of `options` whose rows are `row_width` values:
// chunk_entries entries per chunk (0: about 4 MiB of chunk); entry_count is the caller's.
TableFileHeader dump_header(const TableOptions& options, std::int64_t row_width, KeyType key_type,
                            std::int64_t chunk_entries = 0);
// A dump's entries, validated and checked compatible with a table of `options` and `row_width`
// (load()'s rules), loaded into nothing: for a caller that restores a part of them (a parameter
// server taking its share of shards saved by another number of servers).
TableFileContents read_dump(const std::filesystem::path& path, const TableOptions& options, std::int64_t row_width,
                            KeyType key_type);

}  // namespace embscale::kv
