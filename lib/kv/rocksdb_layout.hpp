// What RocksDbStorage (kv/rocksdb_storage.hpp) writes, and how it tunes RocksDB: the encodings
// of keys, values and metadata records, and the options of its column families. Internal to
// lib/kv, shared with the benchmark's bare-RocksDB baseline (bench/micro/kv_storage_bench.cpp)
// so that the baseline writes the same bytes with the same options.
#pragma once

#include <rocksdb/cache.h>
#include <rocksdb/options.h>

#include <array>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "kv/rocksdb_storage.hpp"

namespace embscale::kv::rocksdb_layout {

inline constexpr const char* kMetaFamily = "embscale.meta";
inline constexpr const char* kFormatVersionKey = "format_version";
inline constexpr const char* kRowWidthKey = "row_width";
inline constexpr const char* kEntryCountKey = "entry_count";

inline constexpr std::size_t kKeyBytes = 8;
inline constexpr std::size_t kScoreBytes = 8;

// Big-endian, so that the bytewise comparator orders keys as numbers.
inline std::array<char, kKeyBytes> encode_key(std::uint64_t key) {
  std::array<char, kKeyBytes> out;
  for (std::size_t i = 0; i < kKeyBytes; ++i) out[i] = static_cast<char>((key >> (8 * (kKeyBytes - 1 - i))) & 0xFF);
  return out;
}

inline std::uint64_t decode_key(const char* in) {
  std::uint64_t key = 0;
  for (std::size_t i = 0; i < kKeyBytes; ++i) key = (key << 8) | static_cast<unsigned char>(in[i]);
  return key;
}

inline void encode_u64_le(char* out, std::uint64_t v) {
  for (std::size_t i = 0; i < 8; ++i) out[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
}

inline std::uint64_t decode_u64_le(const char* in) {
  std::uint64_t v = 0;
  for (std::size_t i = 8; i-- > 0;) v = (v << 8) | static_cast<unsigned char>(in[i]);
  return v;
}

inline std::string u64_record(std::uint64_t v) {
  std::string out(8, '\0');
  encode_u64_le(out.data(), v);
  return out;
}

// float32 little-endian: a plain copy on a little-endian host, byte by byte elsewhere.
inline void encode_floats_le(char* out, const float* in, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, in, n * sizeof(float));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      const auto bits = std::bit_cast<std::uint32_t>(in[i]);
      for (std::size_t b = 0; b < 4; ++b) out[4 * i + b] = static_cast<char>((bits >> (8 * b)) & 0xFF);
    }
  }
}

inline void decode_floats_le(float* out, const char* in, std::size_t n) {
  if constexpr (std::endian::native == std::endian::little) {
    std::memcpy(out, in, n * sizeof(float));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      std::uint32_t bits = 0;
      for (std::size_t b = 4; b-- > 0;) bits = (bits << 8) | static_cast<unsigned char>(in[4 * i + b]);
      out[i] = std::bit_cast<float>(bits);
    }
  }
}

// Bytes of one entry's value: the score, then the row.
inline std::size_t value_bytes(std::int64_t row_width) { return kScoreBytes + 4 * static_cast<std::size_t>(row_width); }

// The database-wide options (background jobs, open files, log files).
rocksdb::DBOptions db_options(const RocksDbOptions& options);
// The entry family's options (kv/rocksdb_storage.hpp lists them and why), reading through `cache`.
rocksdb::ColumnFamilyOptions entry_family_options(const RocksDbOptions& options, std::shared_ptr<rocksdb::Cache> cache);

}  // namespace embscale::kv::rocksdb_layout
