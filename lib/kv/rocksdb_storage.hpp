// RocksDbStorage: the slow tier (kv/storage.hpp) on a RocksDB database in a directory.
//
// Layout. Two column families:
//   * "default" holds the entries. Key: the uint64 key as 8 bytes big-endian, so RocksDB's
//     bytewise order is key order. Value: the uint64 score as 8 bytes little-endian, then
//     row_width float32 little-endian (8 + 4 * row_width bytes).
//   * "embscale.meta" holds what makes the directory an embscale storage: "format_version"
//     (kRocksDbFormatVersion), "row_width" and "entry_count", each a uint64 little-endian. A
//     database without this column family, or with another format version or row width, is
//     refused with InputError naming the path (and both widths).
//
// Exact size. insert and erase first MultiGet the keys of a chunk to learn which are present,
// apply the chunk's changes in input order, and write them with the new "entry_count" in one
// WriteBatch. A WriteBatch is atomic (WAL on), so after a crash of the process at any point the
// recovered count equals the recovered entries: no scan is needed on open. (The alternative,
// counting on open, costs a full scan per open and still needs the presence reads for an exact
// size() between opens.) Calls are split into chunks of RocksDbOptions::batch_entries keys: a
// crash keeps a prefix of a call's chunks, each whole.
//
// Durability. WriteOptions::sync follows RocksDbOptions::sync_writes (default false): a batch
// is in the operating system's buffers when insert/erase return, so it survives the process
// being killed; a power loss may drop the latest batches, never a part of one.
//
// Creation is atomic: a new database is made under a temporary name beside the final path
// ("<parent>/.<name>.tmp.<host>.<pid>", core/temp_files.hpp), its metadata written, closed and renamed
// onto the path (which must then be absent or an empty directory). A directory that exists, is
// not empty and holds no RocksDB database is refused rather than filled.
//
// Options chosen for this use (point lookups of whole rows, written in batches, scanned rarely):
//   * A bloom filter of 10 bits per key on every table file (about 1% false positives), so a
//     lookup of an absent key (every new key of insert, every miss of the fast tier) usually
//     reads no data block; a memtable bloom filter does the same for unflushed entries.
//   * Data blocks of 4 KiB with a hash index inside each block (one block read and no binary
//     search per lookup), an LRU block cache of block_cache_bytes.
//   * No compression by default: embedding rows are float noise to a compressor; LZ4 (fast,
//     when the library was built with it) on request.
//   * Level compaction with dynamic level sizes (bounded space amplification for a store that
//     is overwritten), max_open_files = -1 (table files stay open: no table-cache misses).
//   * Scans (for_each) read with fill_cache = false, so a scan does not evict the hot blocks.
//
// Thread-safety: as for every Storage, calls are made one at a time.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>

#include "kv/storage.hpp"

namespace embscale::kv {

namespace detail {
class RocksDbHandles;  // the open database and its column families (kept out of this header)
}  // namespace detail

// Version of the layout above; a database of another version is refused.
inline constexpr std::uint64_t kRocksDbFormatVersion = 1;

enum class RocksDbCompression { kNone, kLz4 };

struct RocksDbOptions {
  std::int64_t block_cache_bytes = std::int64_t{256} << 20;
  std::int64_t write_buffer_bytes = std::int64_t{64} << 20;  // one memtable
  int background_jobs = 2;                                   // flushes and compactions
  RocksDbCompression compression = RocksDbCompression::kNone;
  bool sync_writes = false;  // fsync the WAL at every batch (see Durability above)
  // Keys per WriteBatch / MultiGet in insert, erase and find, and entries per for_each batch:
  // bounds the memory a call holds beyond its arguments.
  std::int64_t batch_entries = 4096;
};

class RocksDbStorage final : public Storage {
 public:
  // Opens the database in `directory`, or creates it when the directory is absent or empty.
  // Throws InputError when the path cannot hold a database (under a regular file, not
  // writable, a non-empty directory that is not a database), when the database was not made by
  // embscale, or when its row width or format version differ; Error for other RocksDB failures.
  RocksDbStorage(std::filesystem::path directory, std::int64_t row_width, RocksDbOptions options = {});
  ~RocksDbStorage() override;
  RocksDbStorage(const RocksDbStorage&) = delete;
  RocksDbStorage& operator=(const RocksDbStorage&) = delete;

  const std::filesystem::path& directory() const noexcept { return directory_; }

  std::string describe() const override { return "rocksdb:" + directory_.string(); }
  std::int64_t row_width() const override { return row_width_; }
  std::int64_t size() const override { return size_; }

  void find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
            std::span<std::uint64_t> scores) const override;
  // Never drops entries: returns 0.
  std::int64_t insert(std::span<const std::uint64_t> keys, std::span<const float> values,
                      std::span<const std::uint64_t> scores) override;
  std::int64_t erase(std::span<const std::uint64_t> keys) override;
  // Key order (ascending), batches of at most batch_entries entries, over a snapshot taken at
  // the call.
  void for_each(const Visitor& visit) const override;

 private:
  std::filesystem::path directory_;
  std::int64_t row_width_;
  RocksDbOptions options_;
  std::unique_ptr<detail::RocksDbHandles> db_;
  std::int64_t size_ = 0;
};

}  // namespace embscale::kv
