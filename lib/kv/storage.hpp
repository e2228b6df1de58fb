// Storage: the slow tier of a tiered table (dynamicemb's external storage). A caching table sends
// its fast tier's evictions here and looks here after a fast-tier miss; a hybrid table keeps
// here the rows past its fast tier's byte budget. Keys are stored as uint64 (an int64 key is its
// bit pattern); a row is row_width floats; every entry keeps its uint64 score.
//
// Implementations: kv/mapped_storage.hpp (a HostTable whose arrays live in a memory-mapped file,
// so a table can outgrow memory) and kv/rocksdb_storage.hpp (RocksDB on a directory).
// Calls are made one at a time (the tiered table serialises them).
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>

namespace embscale::kv {

class Storage {
 public:
  // One batch of entries for for_each: keys.size() rows of row_width values, and their scores.
  using Visitor = std::function<void(std::span<const std::uint64_t> keys, std::span<const float> values,
                                     std::span<const std::uint64_t> scores)>;

  virtual ~Storage() = default;

  // What this storage is, for messages and reports ("rocksdb:/path", "mapped:/path").
  virtual std::string describe() const = 0;
  virtual std::int64_t row_width() const = 0;
  // Entries held now (exact).
  virtual std::int64_t size() const = 0;

  // For each key: founds[i] = 1 and row i of values (and scores[i] when scores is not empty) when
  // present; rows of absent keys are left untouched.
  virtual void find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                    std::span<std::uint64_t> scores) const = 0;
  // Adds or overwrites each entry with its row and score, in input order (a repeated key: the
  // last one wins). A bounded storage may drop entries (its own eviction); returns how many
  // entries it dropped to make room, or refused.
  virtual std::int64_t insert(std::span<const std::uint64_t> keys, std::span<const float> values,
                              std::span<const std::uint64_t> scores) = 0;
  // Removes the keys that are present; returns how many were.
  virtual std::int64_t erase(std::span<const std::uint64_t> keys) = 0;
  // Visits every entry once, in batches, in an unspecified order.
  virtual void for_each(const Visitor& visit) const = 0;
};

}  // namespace embscale::kv
