// The reference model of the admission filters (lib/kv/admission.hpp), written from the rules
// documented there and not from the code: per bucket a map from (row, cell) to a count, a plain
// sighting counter, aging by halving every count of the bucket, and growth by copying a
// bucket's counts to both halves. ReferenceTable calls it at the same points as the table.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <utility>

#include "core/hash.hpp"
#include "kv/admission.hpp"

namespace embscale::kv::testing {

class ReferenceAdmission {
 public:
  ReferenceAdmission(const AdmissionOptions& o, std::int64_t bucket_capacity, std::int64_t buckets)
      : o_(o), buckets_(buckets) {
    width_ = 1;
    while (static_cast<double>(width_) < o.cells_per_slot * static_cast<double>(bucket_capacity)) width_ *= 2;
    period_ = static_cast<std::uint64_t>(std::llround(o.aging_factor * static_cast<double>(bucket_capacity)));
    salt_ = mix64(o.seed ^ 0x5bd1e9955bd1e995ULL);
  }

  bool enabled() const { return o_.kind != AdmissionOptions::Kind::kNone; }

  void record_hit(std::uint64_t key) {
    if (enabled()) record(key);
  }

  bool admit(std::uint64_t key, Placement placement, std::uint64_t victim) {
    if (!enabled()) return placement != Placement::kRefused;
    record(key);
    if (placement == Placement::kRefused) return false;
    if (o_.kind == AdmissionOptions::Kind::kKCount) return estimate(key) >= o_.threshold_k;
    if (placement == Placement::kFreeSlot) return true;
    return estimate(key) > estimate(victim);
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
    for (int r = 0; r < o_.depth; ++r) {
      int count = 0;
      if (bank != banks_.end()) {
        const auto c = bank->second.counts.find({r, cell(key, r)});
        if (c != bank->second.counts.end()) count = c->second;
      }
      least = std::min(least, count);
    }
    return least;
  }

 private:
  struct Bank {
    std::map<std::pair<int, std::uint64_t>, int> counts;  // (row, cell) -> count
    std::uint64_t sightings = 0;
  };

  std::uint64_t bucket(std::uint64_t key) const {
    return mix64(key) % static_cast<std::uint64_t>(buckets_);  // buckets_ is a power of two
  }
  std::uint64_t cell(std::uint64_t key, int row) const {
    const std::uint64_t offset = static_cast<std::uint64_t>(row + 1) * 0x9e3779b97f4a7c15ULL;
    return mix64((key + offset) ^ salt_) % static_cast<std::uint64_t>(width_);
  }

  void record(std::uint64_t key) {
    Bank& bank = banks_[bucket(key)];
    for (int r = 0; r < o_.depth; ++r) {
      int& c = bank.counts[{r, cell(key, r)}];
      c = std::min(c + 1, o_.max_count);
    }
    ++bank.sightings;
    if (period_ > 0 && bank.sightings == period_) {
      for (auto& [where, c] : bank.counts) c /= 2;
      bank.sightings = 0;
    }
  }

  AdmissionOptions o_;
  std::int64_t buckets_ = 1;
  std::int64_t width_ = 1;
  std::uint64_t period_ = 0;
  std::uint64_t salt_ = 0;
  std::map<std::uint64_t, Bank> banks_;
};

}  // namespace embscale::kv::testing
