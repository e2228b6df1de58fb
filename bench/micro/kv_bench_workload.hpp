// The keys and rows of the KV table benchmarks (kv_bench.cpp): one Workload per (dim, load
// factor), shared by every implementation, so each benchmark gives all of them the same keys in
// the same order and the same rows.
//
// Shapes: HierarchicalKV's benchmark (benchmark/merlin_hashtable_benchmark.cc.cu) runs batches of
// 2^20 keys against tables of 2^26-2^27 slots on a GPU; scaled to a 2-core host, the table has
// capacity = 4 x batch slots (2^22 for batches of 2^20), buckets of 128 slots, so a batch is a
// quarter of the table and the rows (1 GiB at dim 64) are far beyond the last-level cache.
//
// Keys: nth_key(i), a bijection of i (distinct, random-looking 64-bit keys: no table gets the
// locality of sequential keys; libcuckoo's identity std::hash is as good as any on them).
// Rows: row_value(key, d), a pure function of the key, so that every row stored anywhere is
// known, a find can be checked by a checksum, and writes store the rows the tables already hold
// (the write batches carry row_value rows too), which keeps every table's content unchanged from
// one benchmark to the next.
//
// The content (the keys present at load factor L) is made by the embscale table's fill
// (kv_bench_table.hpp) and exported from it; the peers are filled with exactly those keys. The
// batches are drawn from the content with a fixed seed:
// * find: `batch` distinct present keys (all hits), in random order.
// * writes (insert_or_assign, find_or_insert, insert_and_evict): HierarchicalKV's mixed batch,
//   a hit rate of 0.6: 60 % distinct present keys and 40 % new keys (never offered to any
//   table), shuffled together (HierarchicalKV puts the hits first; shuffled, the contiguous
//   halves of two threads get the same mix).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/hash.hpp"

namespace embscale::kv_bench {

// HierarchicalKV's create_keys_for_hitrate default: the share of a write batch already present.
inline constexpr double kHitRate = 0.6;

struct Scale {
  std::size_t batch = std::size_t{1} << 20;                    // keys per call
  std::int64_t bucket_capacity = 128;                          // embscale's slots per bucket (HierarchicalKV's)
  std::size_t capacity() const noexcept { return 4 * batch; }  // slots of the table
};

// The i-th key offered to any table (fill, then new keys of the write batches).
inline std::uint64_t nth_key(std::uint64_t i) noexcept { return embscale::mix64(i + 0x6b7653636c6521ULL); }

// Value d of key's row: a byte of the key, so sums of up to 2^40 values are exact in a double.
inline float row_value(std::uint64_t key, std::size_t d) noexcept {
  return static_cast<float>((key >> ((d & 7) * 8)) & 0xFF);
}

inline void fill_row(std::uint64_t key, std::span<float> row) noexcept {
  for (std::size_t d = 0; d < row.size(); ++d) row[d] = row_value(key, d);
}

inline double row_sum(std::uint64_t key, std::size_t dim) noexcept {
  double s = 0;
  for (std::size_t d = 0; d < dim; ++d) s += row_value(key, d);
  return s;
}

inline double sum_of(std::span<const float> values) noexcept {
  double s = 0;
  for (const float v : values) s += v;
  return s;
}

struct Workload {
  std::size_t dim = 0;
  double load_factor = 0;
  Scale scale;
  std::vector<std::uint64_t> content;  // present keys; content[j] lives in row j of the peers
  // find
  std::vector<std::uint64_t> find_keys;
  double find_checksum = 0;  // sum of the rows of find_keys
  // writes
  std::vector<std::uint64_t> write_keys;
  std::vector<float> write_values;      // write_keys.size() x dim, row_value rows
  std::vector<std::uint8_t> is_new;     // per write key
  std::vector<std::uint64_t> new_keys;  // the new keys among write_keys, in batch order
  std::size_t hits = 0;                 // present keys among write_keys
  double write_hit_checksum = 0;        // sum of the rows of the present write keys
  // Peers' bookkeeping (kv_bench_peers.hpp), precomputed so both peers and both thread counts
  // use the same rows: per write key, the row a new key takes when it is not evicting (the next
  // free row, content.size() + its ordinal among the new keys, as a bump allocator gives), and
  // for insert_and_evict the content index of the entry it evicts, or -1. A table bounded to
  // capacity slots evicts once content.size() + new keys exceed capacity: the last
  // max(0, content + new - capacity) new keys in batch order evict, each a present key that is
  // not in the batch.
  std::vector<std::uint32_t> new_row;
  std::vector<std::int64_t> victim;
  std::size_t evicting = 0;

  std::size_t batch() const noexcept { return scale.batch; }
  std::size_t peer_rows() const noexcept { return content.size() + new_keys.size(); }
};

// The batches of one (dim, load factor) from its content; `first_new` is the nth_key index
// after every key offered so far (so the new keys are absent everywhere).
inline Workload make_workload(std::vector<std::uint64_t> content, std::size_t dim, double load_factor, Scale scale,
                              std::uint64_t first_new) {
  Workload w;
  w.dim = dim;
  w.load_factor = load_factor;
  w.scale = scale;
  w.content = std::move(content);
  const std::size_t n = scale.batch;
  const auto hits = static_cast<std::size_t>(kHitRate * static_cast<double>(n));
  if (w.content.size() < n)
    throw std::invalid_argument("kv_bench: " + std::to_string(w.content.size()) + " present keys at load factor " +
                                std::to_string(load_factor) + ", fewer than a batch of " + std::to_string(n));
  std::mt19937_64 rng(0x6b7662656e6368ULL ^ static_cast<std::uint64_t>(load_factor * 1000));
  std::vector<std::uint32_t> order(w.content.size());
  std::iota(order.begin(), order.end(), 0u);

  std::shuffle(order.begin(), order.end(), rng);
  for (std::size_t i = 0; i < n; ++i) {
    w.find_keys.push_back(w.content[order[i]]);
    w.find_checksum += row_sum(w.find_keys.back(), dim);
  }

  std::shuffle(order.begin(), order.end(), rng);
  std::vector<std::pair<std::uint64_t, bool>> batch;  // (key, new)
  for (std::size_t i = 0; i < hits; ++i) batch.emplace_back(w.content[order[i]], false);
  for (std::size_t i = 0; i < n - hits; ++i) batch.emplace_back(nth_key(first_new + i), true);
  std::shuffle(batch.begin(), batch.end(), rng);
  const std::size_t capacity = scale.capacity();
  const std::size_t n_new = n - hits;
  w.evicting = w.content.size() + n_new > capacity ? w.content.size() + n_new - capacity : 0;
  std::size_t next_new = 0, next_victim = hits;  // victims: order[hits ...], not in the batch
  w.write_values.resize(n * dim);
  for (std::size_t i = 0; i < n; ++i) {
    const auto [key, fresh] = batch[i];
    w.write_keys.push_back(key);
    w.is_new.push_back(fresh);
    fill_row(key, std::span(w.write_values).subspan(i * dim, dim));
    if (!fresh) {
      w.hits++;
      w.write_hit_checksum += row_sum(key, dim);
      w.new_row.push_back(0);
      w.victim.push_back(-1);
      continue;
    }
    w.new_keys.push_back(key);
    w.new_row.push_back(static_cast<std::uint32_t>(w.content.size() + next_new));
    w.victim.push_back(next_new >= n_new - w.evicting ? static_cast<std::int64_t>(order[next_victim++]) : -1);
    ++next_new;
  }
  return w;
}

}  // namespace embscale::kv_bench
