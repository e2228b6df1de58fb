// An independent Zipf(s) stream over n keys, cut into the calls a dynamic table sees: each call
// is one step's distinct keys, as the engine de-duplicates a step before its find_or_insert.
// Used by the eviction-policy comparison (eviction_policies.cpp) and the KV benchmark's Zipf calls
// (kv_bench.cpp), so both feed the table the same calls.
//
// The stream: ranks drawn one after another from workloads::ZipfSampler (rejection-inversion,
// exact) on one Philox cursor (seed, stream 0x5a495046). A call takes the next draws until it
// holds `batch` distinct ranks; the draw that completes it ends the call, and the next call starts
// with the following draw. So the concatenated draws are exactly the independent stream, whatever
// the batch: only where calls begin depends on it. Each distinct rank comes with its multiplicity
// in the call (its accesses), so hit rates can be counted per access (what the top-capacity bound
// H(C, s) / H(n, s) is a rate of) as well as per distinct key.
//
// Keys: key(rank) = mix64(rank ^ salt), salt = mix64(seed ^ (mapping + 1) x golden ratio). mix64
// is a bijection, so the n ranks are n distinct keys, spread over the table's buckets at random
// (its bucket bits are mix64(key)'s). `remap(m)` switches to another mapping (a drifting stream:
// every rank gets a fresh key, so the content learned so far is worthless); keys in the reserved
// range 2^64-3.. are pushed down by 3 (a probability of 3 n / 2^64 per mapping: never seen).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "core/hash.hpp"
#include "core/rng.hpp"
#include "workloads/zipf_sampler.hpp"

namespace embscale::bench {

class ZipfCalls {
 public:
  ZipfCalls(std::int64_t n, double exponent, std::uint64_t seed, std::size_t batch)
      : sampler_(n, exponent), cursor_(CounterRng(seed, 0x5a495046), 0), seed_(seed), batch_(batch),
        stamp_(static_cast<std::size_t>(n) + 1, 0), position_(static_cast<std::size_t>(n) + 1, 0) {
    remap(0);
  }

  // The next call: its distinct keys in order of first draw and each one's draws. Returns the
  // number of draws it consumed (the sum of counts).
  std::uint64_t next(std::vector<std::uint64_t>& keys, std::vector<std::uint32_t>& counts) {
    keys.clear();
    counts.clear();
    ++call_;
    std::uint64_t draws = 0;
    while (keys.size() < batch_) {
      if (at_ == drawn_.size()) refill();
      const auto rank = static_cast<std::size_t>(drawn_[at_++]);
      ++draws;
      if (stamp_[rank] == call_) {
        ++counts[position_[rank]];
        continue;
      }
      stamp_[rank] = call_;
      position_[rank] = static_cast<std::uint32_t>(keys.size());
      keys.push_back(key_of(static_cast<std::int64_t>(rank)));
      counts.push_back(1);
    }
    return draws;
  }

  void remap(std::uint64_t mapping) noexcept { salt_ = mix64(seed_ ^ ((mapping + 1) * 0x9e3779b97f4a7c15ULL)); }

  std::uint64_t key_of(std::int64_t rank) const noexcept {
    const std::uint64_t key = mix64(static_cast<std::uint64_t>(rank) ^ salt_);
    return key >= 0xFFFFFFFFFFFFFFFDULL ? key - 3 : key;
  }
  std::int64_t n() const noexcept { return sampler_.n(); }
  double exponent() const noexcept { return sampler_.exponent(); }
  std::size_t batch() const noexcept { return batch_; }

 private:
  void refill() {
    drawn_.resize(kChunk);
    sampler_.fill(cursor_, drawn_);
    at_ = 0;
  }

  static constexpr std::size_t kChunk = 4096;  // ranks drawn at a time (the sampler's batch path)
  workloads::ZipfSampler sampler_;
  RngCursor cursor_;
  std::uint64_t seed_;
  std::uint64_t salt_ = 0;
  std::size_t batch_;
  std::vector<std::int64_t> drawn_;
  std::size_t at_ = 0;
  std::uint32_t call_ = 0;               // the current call's number (stamps start at 0: none)
  std::vector<std::uint32_t> stamp_;     // per rank: the last call that drew it
  std::vector<std::uint32_t> position_;  // per rank: its index in that call's keys
};

}  // namespace embscale::bench
