#include "sim/lru_oracle.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale::sim {
namespace {

// How many keys ahead access() prefetches a key's KeyIndex slot: far enough to cover a miss to
// memory behind the work of that many accesses, near enough to stay in L1.
constexpr std::size_t kPrefetchAhead = 16;

}  // namespace

LruOracle::LruOracle(std::int64_t capacity) : capacity_(capacity) {
  EMBSCALE_EXPECTS(capacity >= 1, "LruOracle: capacity must be at least 1 key");
}

std::int64_t LruOracle::access(std::span<const std::int64_t> call) {
  std::int64_t hits = 0;
  for (std::size_t i = 0; i < call.size(); ++i) {
    if (i + kPrefetchAhead < call.size()) index_.prefetch(call[i + kPrefetchAhead]);
    bool inserted = false;
    const std::uint32_t id = index_.find_or_insert(call[i], inserted);
    const std::int64_t distance = distances_.access(id);
    // Cold accesses (kCold = -1) miss: distance is >= 0 for every reuse.
    hits += distance >= 0 && distance < capacity_ ? 1 : 0;
  }
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
