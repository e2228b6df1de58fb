// The on-disk format of a dumped KV table (kv/table_file.hpp writes and loads it).
//
// Every integer is little-endian; every section starts at a multiple of 8 bytes.
//
//   header (96 bytes)
//     0  magic              8 bytes "EMBSKVTF"
//     8  format_version     u32, kTableFileVersion
//    12  header_bytes       u32, 96
//    16  key_type           u8: 1 int64, 2 uint64
//    17  value_type         u8: 1 float32, 2 float16, 3 bfloat16 (the rows' stored type: the
//                           dumped table's value type)
//    18  score_strategy     u8: 1 TIMESTAMP, 2 STEP, 3 CUSTOMIZED, 4 LFU, 5 EPOCH_LRU, 6 EPOCH_LFU
//    19  flags              u8: bit 0 set for an incremental dump, other bits 0
//    20  chunk_entries      u32, in [1, 2^24]: entries per chunk (the last chunk may hold fewer)
//    24  dim                u64, in [1, 2^20]
//    32  optimizer_width    u64, in [0, 2^20]: values after the embedding in each row
//                           (the table's row_width - dim: 0 for an evaluation table)
//    40  entry_count        u64
//    48  chunk_count        u64, = ceil(entry_count / chunk_entries)
//    56  threshold          u64: the incremental dump's threshold (0 for a full dump)
//    64  next_threshold     u64: the threshold for the next incremental dump (table_file.hpp)
//    72  reserved           16 bytes, 0
//    88  header_checksum    u64: Checksum64 (core/checksum.hpp) of bytes [0, 88)
//   chunk_count chunks; chunk i holds n = min(chunk_entries, entry_count - i * chunk_entries):
//     0  chunk magic        4 bytes "CHNK"
//     4  entries            u32, n
//     8  chunk_index        u64, i
//    16  keys               n x u64 (an int64 key as its two's-complement bits)
//        scores             n x u64
//        rows               n x (dim + optimizer_width) values of value_type, then zero bytes
//                           up to a multiple of 8
//        chunk_checksum     u64: Checksum64 of the chunk's bytes before it
//   trailer (32 bytes)
//     0  magic              4 bytes "TEND"
//     4  reserved           u32, 0
//     8  entry_count        u64 (again: a file cut at a chunk boundary is told from a whole one)
//    16  chunk_count        u64
//    24  file_checksum      u64: Checksum64 of every byte of the file before it
//
// A reader checks the magic and version first (a file of another version is refused as such),
// then the header checksum, then every field; each chunk's checksum before its contents; the
// trailer; and that nothing follows it. Every error names the file, the byte offset, the field,
// what was expected and what came.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "core/checksum.hpp"
#include "kv/table_options.hpp"

namespace embscale::kv {

inline constexpr char kTableFileMagic[8] = {'E', 'M', 'B', 'S', 'K', 'V', 'T', 'F'};
inline constexpr std::uint32_t kTableFileVersion = 1;
inline constexpr std::size_t kTableFileHeaderBytes = 96;
inline constexpr std::size_t kTableFileChunkHeaderBytes = 16;
inline constexpr std::size_t kTableFileTrailerBytes = 32;
inline constexpr std::int64_t kTableFileMaxDim = std::int64_t{1} << 20;
inline constexpr std::int64_t kTableFileMaxChunkEntries = std::int64_t{1} << 24;

struct TableFileHeader {
  KeyType key_type = KeyType::kInt64;
  ValueType value_type = ValueType::kFloat32;
  ScoreStrategy score_strategy = ScoreStrategy::kTimestamp;
  bool incremental = false;
  std::int64_t chunk_entries = 1;
  std::int64_t dim = 1;
  std::int64_t optimizer_width = 0;
  std::int64_t entry_count = 0;
  std::uint64_t threshold = 0;
  std::uint64_t next_threshold = 0;

  std::int64_t row_width() const noexcept { return dim + optimizer_width; }
  // ceil(entry_count / chunk_entries) without forming entry_count + chunk_entries - 1, which a
  // corrupt header's entry_count near 2^63 would overflow (entry_count >= 0, chunk_entries >= 1).
  std::int64_t chunk_count() const noexcept {
    return entry_count / chunk_entries + (entry_count % chunk_entries != 0 ? 1 : 0);
  }
};

// Bytes of a chunk of n entries, header and checksum included.
std::size_t table_file_chunk_bytes(const TableFileHeader& header, std::int64_t n) noexcept;
// Bytes of a whole file.
std::size_t table_file_bytes(const TableFileHeader& header) noexcept;

// Produces a file's bytes in order (the caller writes them): header(), then chunk() until
// entry_count entries were given, each full but the last, then trailer(). It keeps the running
// file checksum. Throws Error when the calls do not follow the header.
class TableFileEncoder {
 public:
  explicit TableFileEncoder(const TableFileHeader& header);

  std::span<const std::byte> header();
  // rows: keys.size() x row_width values of the header's value_type, packed.
  std::span<const std::byte> chunk(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> scores,
                                   std::span<const std::byte> rows);
  std::span<const std::byte> trailer();

 private:
  std::span<const std::byte> emit();

  TableFileHeader header_;
  Checksum64 file_checksum_;
  std::vector<std::byte> buffer_;
  std::int64_t entries_done_ = 0;
  std::int64_t chunks_done_ = 0;
  int stage_ = 0;  // 0 header next, 1 chunks, 2 done
};

// A parsed, fully validated file: entries in file order, rows decoded to float.
struct TableFileContents {
  TableFileHeader header;
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> scores;
  std::vector<float> values;  // keys.size() x header.row_width()
};

// Parses and validates a whole file held in memory; `name` (the path) starts every error.
// Throws InputError naming the byte offset, the field, what was expected and what came.
TableFileContents parse_table_file(std::span<const std::byte> bytes, const std::string& name);

// Field codes (exposed for tests that write damaged files).
std::uint8_t key_type_code(KeyType t) noexcept;
std::uint8_t value_type_code(ValueType t) noexcept;
std::uint8_t score_strategy_code(ScoreStrategy s) noexcept;
std::string to_string(KeyType t);

}  // namespace embscale::kv
