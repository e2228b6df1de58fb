// Independent references for the trace statistics tests: the obvious quadratic or simulated
// versions of what workloads/ computes cleverly. Kept deliberately naive.
#pragma once

#include <cstdint>
#include <list>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "core/batch.hpp"
#include "core/rng.hpp"
#include "workloads/zipf_sampler.hpp"

namespace embscale::workloads::testing {

inline constexpr std::int64_t kColdDistance = -1;

// Reuse distance of every access by definition: scan back to the previous access of the same
// key and count the distinct keys in between. O(N * window).
inline std::vector<std::int64_t> brute_force_reuse_distances(const std::vector<Key>& stream) {
  std::vector<std::int64_t> distances(stream.size(), kColdDistance);
  for (std::size_t t = 0; t < stream.size(); ++t) {
    std::set<Key> between;
    for (std::size_t p = t; p-- > 0;) {
      if (stream[p] == stream[t]) {
        distances[t] = static_cast<std::int64_t>(between.size());
        break;
      }
      between.insert(stream[p]);
    }
  }
  return distances;
}

// Hits of an LRU cache of `capacity` keys replaying the stream (std::list + map).
inline std::int64_t simulate_lru_hits(const std::vector<Key>& stream, std::int64_t capacity) {
  std::list<Key> recency;  // most recent first
  std::unordered_map<Key, std::list<Key>::iterator> where;
  std::int64_t hits = 0;
  for (const Key key : stream) {
    const auto it = where.find(key);
    if (it != where.end()) {
      ++hits;
      recency.erase(it->second);
    } else if (static_cast<std::int64_t>(recency.size()) == capacity) {
      where.erase(recency.back());
      recency.pop_back();
    }
    recency.push_front(key);
    where[key] = recency.begin();
  }
  return hits;
}

// A stream of `length` keys over [0, keys): uniform when exponent == 0, else Zipf ranks - 1.
inline std::vector<Key> random_stream(std::int64_t length, std::int64_t keys, double exponent, std::uint64_t seed) {
  const ZipfSampler sampler(keys, exponent);
  RngCursor rng(CounterRng(seed, 1));
  std::vector<Key> stream;
  for (std::int64_t i = 0; i < length; ++i) stream.push_back(sampler(rng) - 1);
  return stream;
}

// Access counts per key (std::map: ordered, independent of the collector's hash map).
inline std::map<Key, std::int64_t> count_keys(const std::vector<Key>& stream) {
  std::map<Key, std::int64_t> counts;
  for (const Key key : stream) ++counts[key];
  return counts;
}

}  // namespace embscale::workloads::testing
