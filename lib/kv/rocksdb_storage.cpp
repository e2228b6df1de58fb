#include "kv/rocksdb_storage.hpp"

#include <rocksdb/cache.h>
#include <rocksdb/convenience.h>
#include <rocksdb/db.h>
#include <rocksdb/options.h>
#include <rocksdb/write_batch.h>

#include <algorithm>
#include <array>
#include <string_view>
#include <system_error>
#include <vector>

#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "kv/rocksdb_layout.hpp"

namespace embscale::kv {

namespace fs = std::filesystem;
using namespace rocksdb_layout;  // the encodings, family names and options of the layout

namespace {

// ---- errors -----------------------------------------------------------------------------------

void check(const rocksdb::Status& status, const fs::path& directory, const std::string& doing) {
  if (!status.ok()) throw Error(directory.string() + ": RocksDB storage: " + doing + ": " + status.ToString());
}

[[noreturn]] void refuse(const fs::path& directory, const std::string& why) {
  throw InputError(directory.string() + ": RocksDB storage: " + why);
}

void check_option(bool ok, const std::string& field, const std::string& expected, std::int64_t got) {
  if (!ok)
    throw InputError("RocksDB storage options: " + field + ": expected " + expected + ", got " + std::to_string(got));
}

void validate(std::int64_t row_width, const RocksDbOptions& o) {
  check_option(row_width >= 1, "row_width", ">= 1", row_width);
  check_option(o.block_cache_bytes >= 0, "block_cache_bytes", ">= 0", o.block_cache_bytes);
  check_option(o.write_buffer_bytes >= (std::int64_t{1} << 16), "write_buffer_bytes", ">= 65536", o.write_buffer_bytes);
  check_option(o.background_jobs >= 1, "background_jobs", ">= 1", o.background_jobs);
  check_option(o.batch_entries >= 1, "batch_entries", ">= 1", o.batch_entries);
  if (o.compression == RocksDbCompression::kLz4) {
    const auto supported = rocksdb::GetSupportedCompressions();
    if (std::find(supported.begin(), supported.end(), rocksdb::kLZ4Compression) == supported.end())
      throw InputError(
          "RocksDB storage options: compression: lz4 requested, but this RocksDB library was built "
          "without LZ4 (use none)");
  }
}

// "/a/b/" names the directory b, like "/a/b".
fs::path without_trailing_separator(fs::path p) {
  if (!p.has_filename() && p.has_parent_path()) p = p.parent_path();
  return p;
}

enum class PathState { kAbsentOrEmpty, kDatabase };

PathState inspect(const fs::path& directory) {
  std::error_code ec;
  const auto status = fs::status(directory, ec);
  if (status.type() == fs::file_type::not_found) return PathState::kAbsentOrEmpty;  // also ENOTDIR
  if (ec) refuse(directory, "cannot inspect the path: " + ec.message());
  if (status.type() != fs::file_type::directory) refuse(directory, "the path exists and is not a directory");
  if (fs::exists(directory / "CURRENT", ec)) return PathState::kDatabase;
  const bool empty = fs::is_empty(directory, ec);
  if (ec) refuse(directory, "cannot list the directory: " + ec.message());
  if (!empty) refuse(directory, "the directory is not empty and holds no RocksDB database (no CURRENT file)");
  return PathState::kAbsentOrEmpty;
}

}  // namespace

// ---- the open database --------------------------------------------------------------------------

namespace detail {

class RocksDbHandles {
 public:
  rocksdb::DB* db = nullptr;
  rocksdb::ColumnFamilyHandle* entries = nullptr;
  rocksdb::ColumnFamilyHandle* meta = nullptr;
  std::shared_ptr<rocksdb::Cache> cache;
  rocksdb::WriteOptions write;

  RocksDbHandles() = default;
  RocksDbHandles(const RocksDbHandles&) = delete;
  RocksDbHandles& operator=(const RocksDbHandles&) = delete;
  ~RocksDbHandles() { (void)close(); }

  // Handles first, then the database (RocksDB's order); the status of Close.
  rocksdb::Status close() {
    if (db == nullptr) return rocksdb::Status::OK();
    for (auto* handle : {entries, meta})
      if (handle != nullptr) (void)db->DestroyColumnFamilyHandle(handle);
    entries = meta = nullptr;
    const auto status = db->Close();
    delete db;
    db = nullptr;
    return status;
  }

  // Opens `path` with exactly the families default (the entries) and embscale.meta.
  void open(const fs::path& path, const RocksDbOptions& o, bool create) {
    auto options = db_options(o);
    options.create_if_missing = create;
    options.create_missing_column_families = create;
    cache = rocksdb::NewLRUCache(static_cast<std::size_t>(o.block_cache_bytes));
    const std::vector<rocksdb::ColumnFamilyDescriptor> families = {
        {rocksdb::kDefaultColumnFamilyName, entry_family_options(o, cache)},
        {kMetaFamily, rocksdb::ColumnFamilyOptions()}};
    std::vector<rocksdb::ColumnFamilyHandle*> handles;
    check(rocksdb::DB::Open(options, path.string(), families, &handles, &db), path, "cannot open the database");
    entries = handles.at(0);
    meta = handles.at(1);
    write.sync = o.sync_writes;
  }

  // The uint64 record `name` of the meta family, or false when absent.
  bool read_meta(const fs::path& path, std::string_view name, std::uint64_t& value) const {
    std::string bytes;
    const auto status = db->Get(rocksdb::ReadOptions(), meta, rocksdb::Slice(name.data(), name.size()), &bytes);
    if (status.IsNotFound()) return false;
    check(status, path, "cannot read the metadata record " + std::string(name));
    if (bytes.size() != 8)
      throw Error(path.string() + ": RocksDB storage: metadata record " + std::string(name) + " has " +
                  std::to_string(bytes.size()) + " bytes, expected 8 (a damaged database)");
    value = decode_u64_le(bytes.data());
    return true;
  }
};

}  // namespace detail

namespace {

// Makes a new storage at `directory` (absent or an empty directory): built under a temporary
// name, its metadata written and synced, closed, then renamed onto the path.
void create_database(const fs::path& directory, std::int64_t row_width, const RocksDbOptions& o) {
  std::error_code ec;
  const fs::path parent = directory.has_parent_path() ? directory.parent_path() : fs::path(".");
  fs::create_directories(parent, ec);
  if (ec) refuse(directory, "cannot create the parent directory " + parent.string() + ": " + ec.message());
  const fs::path temp = temporary_path_for(directory);
  fs::remove_all(temp, ec);  // a leftover of an earlier process with this pid
  try {
    fs::create_directory(temp, ec);
    if (ec)
      refuse(directory, "cannot create the directory " + temp.string() +
                            " (renamed onto the path when complete): " + ec.message());
    detail::RocksDbHandles db;
    db.open(temp, o, /*create=*/true);
    rocksdb::WriteBatch batch;
    check(batch.Put(db.meta, kFormatVersionKey, u64_record(kRocksDbFormatVersion)), temp, "cannot write metadata");
    check(batch.Put(db.meta, kRowWidthKey, u64_record(static_cast<std::uint64_t>(row_width))), temp,
          "cannot write metadata");
    check(batch.Put(db.meta, kEntryCountKey, u64_record(0)), temp, "cannot write metadata");
    rocksdb::WriteOptions synced;
    synced.sync = true;
    check(db.db->Write(synced, &batch), temp, "cannot write metadata");
    check(db.close(), temp, "cannot close the new database");
    fs::rename(temp, directory, ec);
    if (ec) throw Error("cannot rename " + temp.string() + " to " + directory.string() + ": " + ec.message());
  } catch (...) {
    fs::remove_all(temp, ec);
    throw;
  }
}

}  // namespace

// ---- RocksDbStorage ---------------------------------------------------------------------------

RocksDbStorage::RocksDbStorage(fs::path directory, std::int64_t row_width, RocksDbOptions options)
    : directory_(without_trailing_separator(std::move(directory))), row_width_(row_width), options_(options) {
  validate(row_width_, options_);
  if (inspect(directory_) == PathState::kAbsentOrEmpty) create_database(directory_, row_width_, options_);

  // An existing database: it must be ours (the meta family and its format record), of this
  // version and row width.
  std::vector<std::string> families;
  check(rocksdb::DB::ListColumnFamilies(db_options(options_), directory_.string(), &families), directory_,
        "cannot list the column families");
  std::sort(families.begin(), families.end());
  const std::vector<std::string> expected = {rocksdb::kDefaultColumnFamilyName, kMetaFamily};
  if (families != expected) {
    std::string found;
    for (const auto& f : families) found += (found.empty() ? "" : ", ") + f;
    refuse(directory_, "not made by embscale: expected the column families default and " + std::string(kMetaFamily) +
                           ", found " + found);
  }
  db_ = std::make_unique<detail::RocksDbHandles>();
  db_->open(directory_, options_, /*create=*/false);

  std::uint64_t version = 0, width = 0, count = 0;
  if (!db_->read_meta(directory_, kFormatVersionKey, version))
    refuse(directory_, "not made by embscale: no " + std::string(kFormatVersionKey) + " record");
  if (version != kRocksDbFormatVersion)
    refuse(directory_, "format version " + std::to_string(version) + ", this build reads version " +
                           std::to_string(kRocksDbFormatVersion));
  if (!db_->read_meta(directory_, kRowWidthKey, width) || !db_->read_meta(directory_, kEntryCountKey, count))
    refuse(directory_, "not made by embscale: the row_width or entry_count record is missing");
  if (width != static_cast<std::uint64_t>(row_width_))
    refuse(directory_,
           "made with row width " + std::to_string(width) + ", opened with row width " + std::to_string(row_width_));
  size_ = static_cast<std::int64_t>(count);
}

RocksDbStorage::~RocksDbStorage() = default;

namespace {

// Keys encoded big-endian, with the slices over them that RocksDB reads.
struct EncodedKeys {
  std::vector<std::array<char, kKeyBytes>> bytes;
  std::vector<rocksdb::Slice> slices;

  void assign(std::span<const std::uint64_t> keys) {
    bytes.resize(keys.size());
    slices.resize(keys.size());
    for (std::size_t i = 0; i < keys.size(); ++i) {
      bytes[i] = encode_key(keys[i]);
      slices[i] = rocksdb::Slice(bytes[i].data(), kKeyBytes);
    }
  }
};

}  // namespace

void RocksDbStorage::find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                          std::span<std::uint64_t> scores) const {
  const auto w = static_cast<std::size_t>(row_width_);
  EMBSCALE_EXPECTS(values.size() == keys.size() * w, "find: values must hold keys.size() rows of row_width");
  EMBSCALE_EXPECTS(founds.size() == keys.size(), "find: founds must hold one flag per key");
  EMBSCALE_EXPECTS(scores.empty() || scores.size() == keys.size(), "find: scores must be empty or one per key");
  const std::size_t entry_bytes = value_bytes(row_width_);
  const auto chunk = static_cast<std::size_t>(options_.batch_entries);
  EncodedKeys encoded;
  std::vector<rocksdb::PinnableSlice> found_values(std::min(chunk, keys.size()));
  std::vector<rocksdb::Status> statuses(found_values.size());
  for (std::size_t begin = 0; begin < keys.size(); begin += chunk) {
    const std::size_t n = std::min(chunk, keys.size() - begin);
    encoded.assign(keys.subspan(begin, n));
    db_->db->MultiGet(rocksdb::ReadOptions(), db_->entries, n, encoded.slices.data(), found_values.data(),
                      statuses.data());
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t i = begin + j;
      if (statuses[j].IsNotFound()) {
        founds[i] = 0;
        continue;
      }
      check(statuses[j], directory_, "cannot read key " + std::to_string(keys[i]));
      const auto& value = found_values[j];
      if (value.size() != entry_bytes)
        throw Error(directory_.string() + ": RocksDB storage: the entry of key " + std::to_string(keys[i]) + " has " +
                    std::to_string(value.size()) + " bytes, expected " + std::to_string(entry_bytes) +
                    " (a damaged database)");
      founds[i] = 1;
      if (!scores.empty()) scores[i] = decode_u64_le(value.data());
      decode_floats_le(values.data() + i * w, value.data() + kScoreBytes, w);
    }
    for (auto& v : found_values) v.Reset();  // unpin the blocks before the next chunk
  }
}

namespace {

// Which of a chunk's distinct keys are present now: `distinct` sorted, `present` beside it.
struct Presence {
  std::vector<std::uint64_t> distinct;
  std::vector<std::uint8_t> present;

  void read(rocksdb::DB& db, rocksdb::ColumnFamilyHandle* family, std::span<const std::uint64_t> keys,
            const fs::path& directory) {
    distinct.assign(keys.begin(), keys.end());
    std::sort(distinct.begin(), distinct.end());
    distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
    EncodedKeys encoded;
    encoded.assign(distinct);
    std::vector<rocksdb::PinnableSlice> values(distinct.size());
    std::vector<rocksdb::Status> statuses(distinct.size());
    // Sorted by number is sorted by the bytewise comparator (big-endian keys).
    db.MultiGet(rocksdb::ReadOptions(), family, distinct.size(), encoded.slices.data(), values.data(), statuses.data(),
                /*sorted_input=*/true);
    present.assign(distinct.size(), 0);
    for (std::size_t i = 0; i < distinct.size(); ++i) {
      if (statuses[i].IsNotFound()) continue;
      check(statuses[i], directory, "cannot read key " + std::to_string(distinct[i]));
      present[i] = 1;
    }
  }

  std::uint8_t& of(std::uint64_t key) {
    return present[static_cast<std::size_t>(std::lower_bound(distinct.begin(), distinct.end(), key) -
                                            distinct.begin())];
  }
};

}  // namespace

std::int64_t RocksDbStorage::insert(std::span<const std::uint64_t> keys, std::span<const float> values,
                                    std::span<const std::uint64_t> scores) {
  const auto w = static_cast<std::size_t>(row_width_);
  EMBSCALE_EXPECTS(values.size() == keys.size() * w, "insert: values must hold keys.size() rows of row_width");
  EMBSCALE_EXPECTS(scores.size() == keys.size(), "insert: scores must hold one score per key");
  const auto chunk = static_cast<std::size_t>(options_.batch_entries);
  std::string value(value_bytes(row_width_), '\0');
  Presence presence;
  for (std::size_t begin = 0; begin < keys.size(); begin += chunk) {
    const auto part = keys.subspan(begin, std::min(chunk, keys.size() - begin));
    presence.read(*db_->db, db_->entries, part, directory_);
    std::int64_t count = size_;
    rocksdb::WriteBatch batch;
    // In input order: a repeated key is Put twice, and the later Put of a batch wins.
    for (std::size_t j = 0; j < part.size(); ++j) {
      const std::size_t i = begin + j;
      auto& present = presence.of(keys[i]);
      if (!present) ++count;
      present = 1;
      encode_u64_le(value.data(), scores[i]);
      encode_floats_le(value.data() + kScoreBytes, values.data() + i * w, w);
      const auto key = encode_key(keys[i]);
      check(batch.Put(db_->entries, rocksdb::Slice(key.data(), kKeyBytes), value), directory_, "cannot batch a write");
    }
    check(batch.Put(db_->meta, kEntryCountKey, u64_record(static_cast<std::uint64_t>(count))), directory_,
          "cannot batch a write");
    check(db_->db->Write(db_->write, &batch), directory_,
          "cannot write a batch of " + std::to_string(part.size()) + " entries");
    size_ = count;
  }
  return 0;
}

std::int64_t RocksDbStorage::erase(std::span<const std::uint64_t> keys) {
  const auto chunk = static_cast<std::size_t>(options_.batch_entries);
  std::int64_t erased = 0;
  Presence presence;
  for (std::size_t begin = 0; begin < keys.size(); begin += chunk) {
    const auto part = keys.subspan(begin, std::min(chunk, keys.size() - begin));
    presence.read(*db_->db, db_->entries, part, directory_);
    std::int64_t removed = 0;
    rocksdb::WriteBatch batch;
    for (const std::uint64_t k : part) {
      auto& present = presence.of(k);
      if (!present) continue;  // absent, or already erased earlier in this call
      present = 0;
      ++removed;
      const auto key = encode_key(k);
      check(batch.Delete(db_->entries, rocksdb::Slice(key.data(), kKeyBytes)), directory_, "cannot batch a delete");
    }
    if (removed == 0) continue;
    const std::int64_t count = size_ - removed;
    check(batch.Put(db_->meta, kEntryCountKey, u64_record(static_cast<std::uint64_t>(count))), directory_,
          "cannot batch a write");
    check(db_->db->Write(db_->write, &batch), directory_,
          "cannot write a batch of " + std::to_string(removed) + " deletes");
    size_ = count;
    erased += removed;
  }
  return erased;
}

void RocksDbStorage::for_each(const Visitor& visit) const {
  const auto w = static_cast<std::size_t>(row_width_);
  const std::size_t entry_bytes = value_bytes(row_width_);
  const auto batch = static_cast<std::size_t>(options_.batch_entries);
  const auto expected = static_cast<std::size_t>(std::min<std::int64_t>(options_.batch_entries, size_));
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> values;
  keys.reserve(expected);
  scores.reserve(expected);
  values.reserve(expected * w);
  rocksdb::ReadOptions read;
  read.fill_cache = false;  // a scan must not evict the blocks that lookups keep hot
  const std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(read, db_->entries));
  const auto flush = [&] {
    visit(keys, values, scores);
    keys.clear();
    scores.clear();
    values.clear();
  };
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const auto key = it->key();
    const auto value = it->value();
    if (key.size() != kKeyBytes || value.size() != entry_bytes)
      throw Error(directory_.string() + ": RocksDB storage: an entry has a key of " + std::to_string(key.size()) +
                  " bytes and a value of " + std::to_string(value.size()) + " bytes, expected " +
                  std::to_string(kKeyBytes) + " and " + std::to_string(entry_bytes) + " (a damaged database)");
    keys.push_back(decode_key(key.data()));
    scores.push_back(decode_u64_le(value.data()));
    values.resize(values.size() + w);
    decode_floats_le(values.data() + values.size() - w, value.data() + kScoreBytes, w);
    if (keys.size() == batch) flush();
  }
  check(it->status(), directory_, "cannot iterate over the entries");
  if (!keys.empty()) flush();
}

}  // namespace embscale::kv
