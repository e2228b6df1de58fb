#include "sim/lru_oracle.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale::sim {

LruOracle::LruOracle(std::int64_t capacity) : capacity_(capacity) {
  EMBSCALE_EXPECTS(capacity >= 1, "LruOracle: capacity must be at least 1 key");
}

std::int64_t LruOracle::access(std::span<const std::int64_t> call) {
  ids_.resize(call.size());
  call_distances_.resize(call.size());
  index_.find_or_insert_all(call, ids_);
  distances_.access_all(ids_, call_distances_);
  std::int64_t hits = 0;
  // Cold accesses (kCold = -1) miss: distance is >= 0 for every reuse.
  for (const std::int64_t distance : call_distances_) hits += distance >= 0 && distance < capacity_ ? 1 : 0;
  return hits;
}

bool LruOracle::contains(std::int64_t key) const {
  const auto id = index_.find(key);
  if (!id) return false;
  const std::int64_t depth = distances_.stack_depth(*id);
  return depth >= 0 && depth < capacity_;
}

std::int64_t LruOracle::size() const noexcept { return std::min<std::int64_t>(index_.size(), capacity_); }

double LruOracle::hit_ratio_at(std::int64_t capacity) const { return distances_.lru_hit_ratio(capacity); }

}  // namespace embscale::sim
