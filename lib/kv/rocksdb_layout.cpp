#include "kv/rocksdb_layout.hpp"

#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>

namespace embscale::kv::rocksdb_layout {

rocksdb::DBOptions db_options(const RocksDbOptions& o) {
  rocksdb::DBOptions d;
  d.max_background_jobs = o.background_jobs;
  d.max_open_files = -1;
  d.keep_log_file_num = 4;  // RocksDB's LOG files, rotated at every open
  return d;
}

rocksdb::ColumnFamilyOptions entry_family_options(const RocksDbOptions& o, std::shared_ptr<rocksdb::Cache> cache) {
  rocksdb::BlockBasedTableOptions table;
  table.block_cache = std::move(cache);
  table.block_size = 4096;
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  table.whole_key_filtering = true;
  table.data_block_index_type = rocksdb::BlockBasedTableOptions::kDataBlockBinaryAndHash;

  rocksdb::ColumnFamilyOptions c;
  c.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  c.write_buffer_size = static_cast<std::size_t>(o.write_buffer_bytes);
  c.memtable_whole_key_filtering = true;
  c.memtable_prefix_bloom_size_ratio = 0.02;  // the memtable's bloom filter: 2% of its bytes
  c.level_compaction_dynamic_level_bytes = true;
  const auto compression =
      o.compression == RocksDbCompression::kLz4 ? rocksdb::kLZ4Compression : rocksdb::kNoCompression;
  c.compression = compression;
  c.bottommost_compression = compression;
  return c;
}

}  // namespace embscale::kv::rocksdb_layout
