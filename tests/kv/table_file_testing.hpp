// Helpers of the dump/load tests (table_file_test.cpp, table_file_load_errors_test.cpp): small
// tables filled with random entries, whole contents as a sorted snapshot, scratch directories.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "kv/host_kv_table.hpp"
#include "kv/host_table.hpp"

namespace embscale::kv::testing {

inline TableOptions dump_options(ValueType type, bool training, std::int64_t max_capacity,
                                 ScoreStrategy strategy = ScoreStrategy::kCustomized) {
  TableOptions o;
  o.dim = 5;
  o.optimizer_state_width = 3;
  o.training = training;
  o.value_type = type;
  o.bucket_capacity = 16;
  o.init_capacity = std::min<std::int64_t>(64, max_capacity);
  o.max_capacity = max_capacity;
  o.max_load_factor = 0.75;
  o.score_strategy = strategy;
  o.seed = 7;
  return o;
}

// Inserts n random keys (int64 keys include negatives) with random rows and scores (CUSTOMIZED)
// in batches of 100.
template <TableKey Key> void fill_random(KvTable<Key>& table, std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const auto w = static_cast<std::size_t>(table.row_width());
  std::uniform_real_distribution<float> value_of(-3.0f, 3.0f);
  for (std::size_t done = 0; done < n;) {
    const std::size_t b = std::min<std::size_t>(100, n - done);
    std::vector<Key> keys(b);
    std::vector<std::uint64_t> scores(b);
    std::vector<float> values(b * w);
    for (auto& k : keys) {
      do k = static_cast<Key>(rng() >> 1) * (rng() % 2 && std::is_signed_v<Key> ? Key(-1) : Key(1));
      while (static_cast<std::uint64_t>(k) >= kFirstReservedKey);
    }
    for (auto& s : scores) s = rng() % 100000;
    for (auto& v : values) v = value_of(rng);
    table.insert_or_assign(keys, values, scores);
    done += b;
  }
}

struct Entry {
  std::uint64_t score;
  std::vector<float> row;
  bool operator==(const Entry&) const = default;
};
using Snapshot = std::map<std::uint64_t, Entry>;  // by stored key

template <TableKey Key> Snapshot snapshot(const KvTable<Key>& table) {
  Snapshot out;
  Entries<Key> piece;
  const auto w = static_cast<std::size_t>(table.row_width());
  const std::int64_t step = 1000;
  for (std::int64_t offset = 0; offset < table.capacity(); offset += step) {
    table.export_batch(offset, step, piece);
    for (std::size_t i = 0; i < piece.size(); ++i)
      out[static_cast<std::uint64_t>(piece.keys[i])] = {
          piece.scores[i],
          {piece.values.begin() + static_cast<long>(i * w), piece.values.begin() + static_cast<long>((i + 1) * w)}};
  }
  EXPECT_EQ(static_cast<std::int64_t>(out.size()), table.size());
  return out;
}

// A fresh directory under the system's temporary directory, removed at the end of the test.
class ScratchDir {
 public:
  explicit ScratchDir(const std::string& name)
      : path_(std::filesystem::temp_directory_path() / ("embscale_" + name + "_" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const noexcept { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) out.push_back(e.path().filename().string());
    std::sort(out.begin(), out.end());
    return out;
  }

 private:
  std::filesystem::path path_;
};

inline std::vector<std::byte> read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> out(chars.size());
  std::transform(chars.begin(), chars.end(), out.begin(), [](char c) { return static_cast<std::byte>(c); });
  return out;
}

inline void write_bytes(const std::filesystem::path& path, const std::vector<std::byte>& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

}  // namespace embscale::kv::testing
