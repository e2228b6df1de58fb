// Streams for the oracles' tests: small random traces of calls (keys distinct within a call) and
// independent Zipf streams cut into calls, plus the brute-force LRU the tests share. The
// references are deliberately naive: plain vectors and linear scans.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <span>
#include <vector>

#include "core/rng.hpp"
#include "workloads/zipf_sampler.hpp"

namespace embscale::sim::testing {

using Call = std::vector<std::int64_t>;
using Calls = std::vector<Call>;

// `calls` calls of 1..max_call keys. Key ids in [0, keys) drawn uniformly (skew 0) or by
// id = floor(keys * u^(1 + skew)) (small ids hot); a repeat inside a call is dropped. Ids map to
// keys 37 id - 100, so some keys are negative (their order as uint64 differs from int64's).
inline Calls random_calls(std::uint64_t seed, std::int64_t calls, std::int64_t max_call, std::int64_t keys,
                          double skew = 0.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  std::uniform_int_distribution<std::int64_t> size(1, max_call);
  Calls out;
  for (std::int64_t c = 0; c < calls; ++c) {
    Call call;
    for (std::int64_t n = size(rng), i = 0; i < n; ++i) {
      const auto id =
          std::min(keys - 1, static_cast<std::int64_t>(static_cast<double>(keys) * std::pow(unit(rng), 1.0 + skew)));
      const std::int64_t key = 37 * id - 100;
      if (std::find(call.begin(), call.end(), key) == call.end()) call.push_back(key);
    }
    out.push_back(call);
  }
  return out;
}

// The small traces every oracle test replays against its brute force: one key per call and long
// calls; few keys (everything fits soon) and many; uniform and skewed. Seeds seed, seed + 1, ...
struct TraceCase {
  std::uint64_t seed;
  std::int64_t calls, max_call, keys;
  double skew;
};
inline std::vector<TraceCase> trace_cases(std::uint64_t seed) {
  return {{seed, 300, 1, 12, 0.0},      {seed + 1, 120, 9, 40, 0.0}, {seed + 2, 80, 30, 60, 2.0},
          {seed + 3, 200, 5, 300, 1.0}, {seed + 4, 60, 50, 25, 0.5}, {seed + 5, 400, 3, 30, 3.0}};
}
inline Calls random_calls(const TraceCase& t) { return random_calls(t.seed, t.calls, t.max_call, t.keys, t.skew); }

// Capacities from 1 key to beyond a trace's distinct keys, ascending, each once.
inline std::vector<std::int64_t> capacities(std::int64_t distinct) {
  std::vector<std::int64_t> out;
  for (const std::int64_t c : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3}, std::int64_t{5}, std::int64_t{11},
                               distinct - 1, distinct, distinct + 3})
    if (c >= 1 && (out.empty() || c > out.back())) out.push_back(c);
  return out;
}

// An independent Zipf(s) stream over ranks 1..keys (key = rank - 1) of `accesses` draws, cut into
// calls of at most max_call keys, a call ending early where the next draw repeats one of its
// keys: every draw is an access, so the stream is exactly the independent reference model.
inline Calls zipf_calls(std::int64_t accesses, std::int64_t keys, double s, std::uint64_t seed,
                        std::size_t max_call = 256) {
  const workloads::ZipfSampler sampler(keys, s);
  RngCursor rng(CounterRng(seed, 7));
  std::vector<std::int64_t> ranks(static_cast<std::size_t>(accesses));
  sampler.fill(rng, ranks);
  Calls out(1);
  std::vector<std::int64_t> mark(static_cast<std::size_t>(keys), -1);  // the call a key last joined
  for (const std::int64_t rank : ranks) {
    const std::int64_t key = rank - 1;
    if (out.back().size() == max_call || mark[static_cast<std::size_t>(key)] == static_cast<std::int64_t>(out.size()))
      out.emplace_back();
    mark[static_cast<std::size_t>(key)] = static_cast<std::int64_t>(out.size());
    out.back().push_back(key);
  }
  return out;
}

// Brute-force LRU: `recency` holds the residents, least recent first.
class BruteLru {
 public:
  explicit BruteLru(std::int64_t capacity) : capacity_(capacity) {}
  std::int64_t access(std::span<const std::int64_t> call) {
    std::int64_t hits = 0;
    for (const std::int64_t key : call) {
      const auto it = std::find(recency_.begin(), recency_.end(), key);
      if (it != recency_.end()) {
        ++hits;
        recency_.erase(it);
      } else if (static_cast<std::int64_t>(recency_.size()) == capacity_) {
        recency_.erase(recency_.begin());
      }
      recency_.push_back(key);
    }
    return hits;
  }
  const std::vector<std::int64_t>& residents() const { return recency_; }

 private:
  std::int64_t capacity_;
  std::vector<std::int64_t> recency_;
};

// The distinct keys of a trace.
inline std::vector<std::int64_t> distinct_keys(const Calls& calls) {
  std::vector<std::int64_t> keys;
  for (const Call& call : calls) keys.insert(keys.end(), call.begin(), call.end());
  std::sort(keys.begin(), keys.end());
  keys.erase(std::unique(keys.begin(), keys.end()), keys.end());
  return keys;
}

}  // namespace embscale::sim::testing
