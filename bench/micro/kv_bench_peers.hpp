// The peers a CPU user would pick instead of embscale's table, used the way such a user would:
// a hash map from key to row index over an array of rows, one key at a time.
// * absl::flat_hash_map<uint64_t, uint32_t> (Swiss table, SSE2 groups). Not safe for concurrent
//   writers: its writes run on one thread only (concurrent finds are safe).
// * libcuckoo::cuckoohash_map<uint64_t, uint32_t> (the CPU table behind TFRA and Monolith):
//   fine-grained bucket locks, every call safe from several threads.
// Both maps index the same PeerRows (content key j in row j), both reserved for the content
// plus a batch so that no timed call rehashes. Two threads split a batch into contiguous
// halves (OpenMP, like embscale's find). Rows live in a MappedArray, as embscale's do
// (transparent huge pages), so the comparison is of the tables, not of the page size.
//
// What each write does per key (the same bookkeeping for both peers):
// * insert_or_assign: insert key -> new_row[i] unless present; write the batch row into the row.
// * find_or_insert: insert unless present; a new key's row is kv::initial_row (the function
//   embscale's table calls), written to the row and the output; a present key's row is read.
// * insert_and_evict: as insert_or_assign, and a new key marked in Workload::victim then erases
//   its victim (copying the victim's key and row out first) and takes the victim's row: a table
//   bounded to `capacity` entries. The victim is given (an oracle), where embscale scans a bucket
//   for the lowest score: this favours the peers.
// Unbounded maps never evict, so their insert_or_assign and find_or_insert at load factor 1.0
// grow past the capacity, where embscale's evict.
#pragma once

#include <absl/container/flat_hash_map.h>
#include <omp.h>
#include <libcuckoo/cuckoohash_map.hh>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "kv/host_table.hpp"
#include "kv/initializer.hpp"
#include "kv/mapped_array.hpp"
#include "kv_bench_table.hpp"
#include "kv_bench_workload.hpp"

namespace embscale::kv_bench {

// Runs body(begin, end) on `threads` OpenMP threads, one contiguous range each.
template <typename Body> void on_threads(std::size_t n, int threads, Body&& body) {
  if (threads <= 1) {
    body(std::size_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(threads)
  {
    const auto t = static_cast<std::size_t>(omp_get_thread_num());
    const auto nt = static_cast<std::size_t>(omp_get_num_threads());
    body(n * t / nt, n * (t + 1) / nt);
  }
}

// Rows of both peers: content key j in row j, then the rows new keys take.
class PeerRows {
 public:
  explicit PeerRows(const Workload& w) : dim_(w.dim), rows_(w.peer_rows() * w.dim * sizeof(float), std::string()) {
    for (std::size_t j = 0; j < w.content.size(); ++j) fill_row(w.content[j], row(j));
  }
  std::span<float> row(std::size_t r) noexcept { return {reinterpret_cast<float*>(rows_.data()) + r * dim_, dim_}; }

 private:
  std::size_t dim_;
  kv::MappedArray rows_;
};

// Entries a peer's insert_and_evict took out: key and row of the evicting key's position.
struct PeerEvicted {
  std::vector<std::uint64_t> keys;
  std::vector<float> rows;
};

struct AbslMap {
  static constexpr bool kConcurrentWrites = false;
  static constexpr const char* kName = "absl";
  absl::flat_hash_map<std::uint64_t, std::uint32_t> map;

  void reserve(std::size_t n) { map.reserve(n); }
  std::size_t size() const { return map.size(); }
  bool find(std::uint64_t key, std::uint32_t& row) const {
    const auto it = map.find(key);
    if (it == map.end()) return false;
    row = it->second;
    return true;
  }
  // Inserts key -> row unless present; `row` becomes the key's row. True when inserted.
  bool upsert(std::uint64_t key, std::uint32_t& row) {
    const auto [it, inserted] = map.try_emplace(key, row);
    row = it->second;
    return inserted;
  }
  bool erase(std::uint64_t key, std::uint32_t& row) {
    const auto it = map.find(key);
    if (it == map.end()) return false;
    row = it->second;
    map.erase(it);
    return true;
  }
};

struct CuckooMap {
  static constexpr bool kConcurrentWrites = true;
  static constexpr const char* kName = "libcuckoo";
  libcuckoo::cuckoohash_map<std::uint64_t, std::uint32_t> map;

  void reserve(std::size_t n) { map.reserve(n); }
  std::size_t size() const { return map.size(); }
  bool find(std::uint64_t key, std::uint32_t& row) const { return map.find(key, row); }
  bool upsert(std::uint64_t key, std::uint32_t& row) {
    return map.upsert(
        key, [&row](const std::uint32_t& existing) { row = existing; }, row);
  }
  bool erase(std::uint64_t key, std::uint32_t& row) {
    return map.erase_fn(key, [&row](const std::uint32_t& existing) {
      row = existing;
      return true;
    });
  }
};

template <typename Map> class Peer {
 public:
  Peer(const Workload& w, PeerRows& rows) : rows_(rows), init_(table_options(w.dim, w.scale)) {
    map_.reserve(w.content.size() + w.batch());
    for (std::size_t j = 0; j < w.content.size(); ++j) {
      auto row = static_cast<std::uint32_t>(j);
      map_.upsert(w.content[j], row);
    }
  }

  // founds[i] = 1 and out row i = the key's row, for present keys.
  kv::CallStats find(std::span<const std::uint64_t> keys, std::span<float> out, std::span<std::uint8_t> founds,
                     int threads) const {
    std::atomic<std::int64_t> found = 0;
    const std::size_t dim = init_.dim_size();
    on_threads(keys.size(), threads, [&](std::size_t begin, std::size_t end) {
      std::int64_t mine = 0;
      for (std::size_t i = begin; i < end; ++i) {
        std::uint32_t row = 0;
        founds[i] = map_.find(keys[i], row);
        if (!founds[i]) continue;
        ++mine;
        std::memcpy(out.data() + i * dim, rows_.row(row).data(), dim * sizeof(float));
      }
      found += mine;
    });
    return {found.load(), 0, 0, 0};
  }

  kv::CallStats insert_or_assign(const Workload& w, int threads) {
    check_threads(threads);
    return write(w, threads, [&](std::size_t i, std::uint32_t row, bool, kv::CallStats&) {
      std::memcpy(rows_.row(row).data(), w.write_values.data() + i * w.dim, w.dim * sizeof(float));
    });
  }

  kv::CallStats find_or_insert(const Workload& w, std::span<float> out, int threads) {
    check_threads(threads);
    return write(w, threads, [&](std::size_t i, std::uint32_t row, bool inserted, kv::CallStats&) {
      const auto dst = out.subspan(i * w.dim, w.dim);
      if (inserted) {
        kv::initial_row(init_.options.initializer, init_.options.seed, init_.options.max_capacity, w.write_keys[i],
                        init_.options.dim, dst);
        std::memcpy(rows_.row(row).data(), dst.data(), w.dim * sizeof(float));
      } else {
        std::memcpy(dst.data(), rows_.row(row).data(), w.dim * sizeof(float));
      }
    });
  }

  kv::CallStats insert_and_evict(const Workload& w, PeerEvicted& evicted, int threads) {
    check_threads(threads);
    return write(
        w, threads,
        [&](std::size_t i, std::uint32_t row, bool inserted, kv::CallStats& stats) {
          if (inserted && w.victim[i] >= 0) {
            const std::uint64_t victim = w.content[static_cast<std::size_t>(w.victim[i])];
            std::uint32_t victim_row = 0;
            if (!map_.erase(victim, victim_row) || victim_row != row) ++stats.refused;  // checked by the caller
            evicted.keys[i] = victim;
            std::memcpy(evicted.rows.data() + i * w.dim, rows_.row(victim_row).data(), w.dim * sizeof(float));
            ++stats.evicted;
          }
          std::memcpy(rows_.row(row).data(), w.write_values.data() + i * w.dim, w.dim * sizeof(float));
        },
        /*evicting=*/true);
  }

  // After a timed write: erases the new keys, puts the victims back with their rows.
  void restore(const Workload& w, bool victims) {
    std::uint32_t row = 0;
    for (const auto key : w.new_keys) map_.erase(key, row);
    if (victims)
      for (std::size_t i = 0; i < w.write_keys.size(); ++i) {
        if (w.victim[i] < 0) continue;
        const auto j = static_cast<std::size_t>(w.victim[i]);
        row = static_cast<std::uint32_t>(j);
        map_.upsert(w.content[j], row);
        fill_row(w.content[j], rows_.row(j));
      }
    if (map_.size() != w.content.size())
      throw std::runtime_error(std::string("kv_bench: ") + Map::kName + " holds " + std::to_string(map_.size()) +
                               " keys after a reset, not " + std::to_string(w.content.size()));
  }

 private:
  // The table_options initializer and dim of the embscale table (for find_or_insert's rows).
  struct Init {
    kv::TableOptions options;
    explicit Init(kv::TableOptions o) : options(std::move(o)) {}
    std::size_t dim_size() const noexcept { return static_cast<std::size_t>(options.dim); }
  };

  void check_threads(int threads) const {
    if (threads > 1 && !Map::kConcurrentWrites)
      throw std::logic_error(std::string("kv_bench: ") + Map::kName + " cannot take writes from several threads");
  }

  // Per key: upsert key -> candidate row, then on_key(i, row, inserted, stats).
  template <typename OnKey> kv::CallStats write(const Workload& w, int threads, OnKey&& on_key, bool evicting = false) {
    std::vector<kv::CallStats> per_thread(static_cast<std::size_t>(std::max(threads, 1)));
    on_threads(w.write_keys.size(), threads, [&](std::size_t begin, std::size_t end) {
      kv::CallStats stats;
      for (std::size_t i = begin; i < end; ++i) {
        std::uint32_t row = evicting && w.victim[i] >= 0 ? static_cast<std::uint32_t>(w.victim[i]) : w.new_row[i];
        const bool inserted = map_.upsert(w.write_keys[i], row);
        if (inserted) ++stats.inserted;
        else ++stats.found;
        on_key(i, row, inserted, stats);
      }
      per_thread[threads <= 1 ? 0 : static_cast<std::size_t>(omp_get_thread_num())] = stats;
    });
    kv::CallStats total;
    for (const auto& s : per_thread) total += s;
    return total;
  }

  PeerRows& rows_;
  Init init_;
  Map map_;
};

using AbslPeer = Peer<AbslMap>;
using CuckooPeer = Peer<CuckooMap>;

}  // namespace embscale::kv_bench
