// The reference model of the admission filters (lib/kv/admission.hpp), written from the rules
// documented there and not from the code: per bucket a map from (block, counter) to a count, a
// plain sighting counter, aging by halving every count of the bucket, and growth by copying a
// bucket's counts to both halves. ReferenceTable calls it at the same points as the table.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "core/hash.hpp"
#include "kv/admission.hpp"

namespace embscale::kv::testing {

class ReferenceAdmission {
 public:
  ReferenceAdmission(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets)
      : o_(o), buckets_(buckets) {
    // "the power of two >= depth x cells_per_slot x bucket_capacity / 64 (at least 1)"
    blocks_ = 1;
    while (static_cast<double>(blocks_) < o.depth * o.cells_per_slot * static_cast<double>(bucket_capacity) / 64.0)
      blocks_ *= 2;
    period_ = static_cast<std::uint64_t>(std::llround(o.aging_factor * static_cast<double>(bucket_capacity)));
    salt_ = mix64(o.seed ^ 0x5bd1e9955bd1e995ULL);
  }

  bool enabled() const { return o_.kind != AdmissionOptions::Kind::kNone; }

  // One sighting; true when it halved the key's bank.
  bool record(std::uint64_t key) {
    if (!enabled()) return false;
    Bank& bank = banks_[bucket(key)];
    const auto cells = cells_of(key);
    if (o_.conservative_update) {
      int least = o_.max_count;
      for (const auto& c : cells) least = std::min(least, count(bank, c));
      for (const auto& c : cells)
        if (count(bank, c) == least && least < o_.max_count) bank.counts[c] = least + 1;
    } else {
      for (const auto& c : cells) bank.counts[c] = std::min(count(bank, c) + 1, o_.max_count);
    }
    ++bank.sightings;
    if (period_ == 0 || bank.sightings != period_) return false;
    for (auto& [where, c] : bank.counts) c /= 2;
    bank.sightings = 0;
    return true;
  }

  bool admits(std::uint64_t key, Placement placement, std::uint64_t victim) const {
    if (placement == Placement::kRefused) return false;
    if (!enabled()) return true;
    if (o_.kind == AdmissionOptions::Kind::kKCount) return estimate(key) >= o_.threshold_k;
    if (placement == Placement::kFreeSlot) return true;
    return estimate(key) > estimate(victim);
  }

  bool admit(std::uint64_t key, Placement placement, std::uint64_t victim) {
    record(key);
    return admits(key, placement, victim);
  }

  // The table doubled (or more): bucket b's counts are those of bucket b mod the old count.
  void grow(std::int64_t buckets) {
    std::map<std::uint64_t, Bank> banks;
    for (std::int64_t b = 0; b < buckets; ++b) {
      const auto it = banks_.find(static_cast<std::uint64_t>(b % buckets_));
      if (it != banks_.end()) banks[static_cast<std::uint64_t>(b)] = it->second;
    }
    banks_ = std::move(banks);
    buckets_ = buckets;
  }

  void clear() { banks_.clear(); }

  int estimate(std::uint64_t key) const {
    if (!enabled()) return 0;
    const auto bank = banks_.find(bucket(key));
    int least = o_.max_count;
    for (const auto& c : cells_of(key)) least = std::min(least, bank == banks_.end() ? 0 : count(bank->second, c));
    return least;
  }

 private:
  using Cell = std::pair<std::uint64_t, int>;  // (block, counter within the block)
  struct Bank {
    std::map<Cell, int> counts;
    std::uint64_t sightings = 0;
  };

  static int count(const Bank& bank, const Cell& c) {
    const auto it = bank.counts.find(c);
    return it == bank.counts.end() ? 0 : it->second;
  }
  std::uint64_t bucket(std::uint64_t key) const {
    return mix64(key) % static_cast<std::uint64_t>(buckets_);  // buckets_ is a power of two
  }
  // "its block is (h >> 48) & (blocks - 1), its row-r counter r x per_row + (((h >> 6r) & 63) x
  // per_row) >> 6, per_row = 64 / depth rounded down": written with division and modulo here.
  std::vector<Cell> cells_of(std::uint64_t key) const {
    const std::uint64_t h = mix64(key ^ salt_);
    const std::uint64_t block = (h / (std::uint64_t{1} << 48)) % static_cast<std::uint64_t>(blocks_);
    const int per_row = 64 / o_.depth;
    std::vector<Cell> cells;
    for (int r = 0; r < o_.depth; ++r) {
      const auto six_bits = static_cast<int>((h / (std::uint64_t{1} << (6 * r))) % 64);
      cells.push_back({block, r * per_row + six_bits * per_row / 64});
    }
    return cells;
  }

  AdmissionOptions o_;
  std::int64_t buckets_ = 1;
  std::int64_t blocks_ = 1;
  std::uint64_t period_ = 0;
  std::uint64_t salt_ = 0;
  std::map<std::uint64_t, Bank> banks_;
};

}  // namespace embscale::kv::testing
