#include "plan/tier_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "plan/memory_model.hpp"

namespace embscale::plan {
namespace {

constexpr int kBisections = 200;

// The slots' keys that `steps` steps ask for: sum_s f_s D_s(d_s steps).
double distinct_in(std::span<const TierSlot> slots, double steps) {
  double sum = 0.0;
  for (const auto& slot : slots)
    sum += slot.owned_fraction * slot.popularity->expected_distinct(0, slot.popularity->keys(), slot.draws * steps);
  return sum;
}

double total_keys(std::span<const TierSlot> slots) {
  double sum = 0.0;
  for (const auto& slot : slots) sum += slot.owned_fraction * static_cast<double>(slot.popularity->keys());
  return sum;
}

TierPrediction finished(TierPrediction p) {
  p.misses = std::clamp(p.misses, 0.0, p.lookups);
  p.hit_rate = p.lookups > 0.0 ? 1.0 - p.misses / p.lookups : 1.0;
  return p;
}

// The keys of slot `slot` asked for at least `rate` times per step (a prefix: non-increasing
// popularity): the first index whose draws x probability is below it.
std::int64_t keys_above(const TierSlot& slot, double rate) {
  std::int64_t low = 0, high = slot.popularity->keys();  // the answer is in [low, high]
  while (low < high) {
    const std::int64_t mid = low + (high - low) / 2;
    if (slot.draws * slot.popularity->probability(mid) >= rate) low = mid + 1;
    else high = mid;
  }
  return low;
}

void check(std::span<const TierSlot> slots) {
  for (const auto& slot : slots)
    EMBSCALE_EXPECTS(
        slot.popularity != nullptr && slot.owned_fraction > 0.0 && slot.owned_fraction <= 1.0 && slot.draws >= 0.0,
        "a tier slot needs a popularity, an owned fraction in (0, 1] and draws >= 0");
}

}  // namespace

std::string to_string(TierRetention retention) {
  switch (retention) {
    case TierRetention::kRecency: return "recency";
    case TierRetention::kTopCapacity: return "top_capacity";
    case TierRetention::kHashShare: return "hash_share";
  }
  return "?";
}

TierPrediction recency_tier(std::span<const TierSlot> slots, double capacity) {
  check(slots);
  TierPrediction p;
  p.retention = TierRetention::kRecency;
  p.capacity = capacity;
  p.lookups = distinct_in(slots, 1.0);
  const double keys = total_keys(slots);
  if (keys <= capacity) {  // everything fits: no miss once every key has come once
    p.held_keys = keys;
    return finished(p);
  }
  if (capacity <= 0.0) {
    p.misses = p.lookups;
    return finished(p);
  }
  p.held_keys = capacity;
  if (capacity < p.lookups) {
    // Fewer rows than a step's distinct keys: Che's "the last T steps" has T < 1, and a step's keys
    // enter with one score (their order inside a call decides, not their recency). Taken as a random
    // C of the last step's D(1) keys: a key hits when it was in the last step and was kept,
    // sum_k q_k^2 C / D(1), q_k = 1 - (1 - p_k)^d, and sum_k q_k^2 = 2 D(1) - D(2).
    p.below_one_step = true;
    const double repeated = 2.0 * p.lookups - distinct_in(slots, 2.0);
    p.misses = p.lookups - capacity / p.lookups * repeated;
    return finished(p);
  }
  // D(T) grows from 0 to `keys` > capacity, past D(1): bracket T, then bisect.
  double high = 1.0;
  while (distinct_in(slots, high) < capacity && high < 1e300) high *= 2.0;
  double low = 0.0;
  for (int i = 0; i < kBisections && high - low > 1e-12 * high; ++i) {
    const double mid = 0.5 * (low + high);
    (distinct_in(slots, mid) < capacity ? low : high) = mid;
  }
  const double t = 0.5 * (low + high);
  p.misses = distinct_in(slots, t + 1.0) - distinct_in(slots, t);
  return finished(p);
}

TierPrediction top_capacity_tier(std::span<const TierSlot> slots, double capacity) {
  check(slots);
  for (const auto& slot : slots)
    EMBSCALE_EXPECTS(slot.popularity->non_increasing(), "the top capacity needs popularities ordered by index");
  TierPrediction p;
  p.retention = TierRetention::kTopCapacity;
  p.capacity = capacity;
  p.lookups = distinct_in(slots, 1.0);
  const double keys = total_keys(slots);
  if (keys <= capacity) {
    p.held_keys = keys;
    return finished(p);
  }
  // The held keys are those asked for at least `rate` times per step, the least rate at which
  // they still fit: held(rate) falls as the rate rises; bisect in log(rate).
  const auto held_at = [&](double rate) {
    double held = 0.0;
    for (const auto& slot : slots) held += slot.owned_fraction * static_cast<double>(keys_above(slot, rate));
    return held;
  };
  double high = 0.0;  // the highest rate any key has: nothing held above it
  for (const auto& slot : slots) high = std::max(high, slot.draws * slot.popularity->probability(0));
  if (high <= 0.0 || capacity <= 0.0) {
    p.misses = p.lookups;
    return finished(p);
  }
  high *= 2.0;
  double low = high;
  while (held_at(low) <= capacity && low > 1e-300) low *= 0.5;  // held(low) > capacity
  for (int i = 0; i < kBisections && high - low > 1e-12 * high; ++i) {
    const double mid = std::sqrt(low * high);
    (held_at(mid) > capacity ? low : high) = mid;
  }
  // At `high` the held keys fit; the misses are the asked-for keys beyond each slot's prefix.
  for (const auto& slot : slots) {
    const std::int64_t held = keys_above(slot, high);
    p.held_keys += slot.owned_fraction * static_cast<double>(held);
    p.misses += slot.owned_fraction * slot.popularity->expected_distinct(held, slot.popularity->keys(), slot.draws);
  }
  return finished(p);
}

TierPrediction hash_share_tier(std::span<const TierSlot> slots, double share, double steps) {
  check(slots);
  EMBSCALE_EXPECTS(share >= 0.0 && share <= 1.0 && steps >= 1.0, "a hash share is in [0, 1], a run a step or more");
  TierPrediction p;
  p.retention = TierRetention::kHashShare;
  p.capacity = share;
  p.lookups = distinct_in(slots, 1.0);
  p.misses = (1.0 - share) * p.lookups + share * distinct_in(slots, steps) / steps;
  p.held_keys = share * total_keys(slots);
  return finished(p);
}

TierRetention tier_retention_of(const config::EmbeddingStorage& storage, std::span<const TierSlot> slots,
                                std::string& note) {
  using kv::ScoreStrategy;
  note.clear();
  if (!storage.caching) return TierRetention::kHashShare;
  const auto strategy = storage.table.score_strategy;
  const bool admission = storage.table.admission.kind != kv::AdmissionOptions::Kind::kNone;
  const bool frequency = strategy == ScoreStrategy::kFrequency ||
                         (admission && (strategy == ScoreStrategy::kLfu || strategy == ScoreStrategy::kEpochLfu ||
                                        strategy == ScoreStrategy::kStep || strategy == ScoreStrategy::kTimestamp ||
                                        strategy == ScoreStrategy::kEpochLru));
  if (strategy == ScoreStrategy::kCustomized)
    note = "score_strategy CUSTOMIZED: the caller's scores decide; recency (LRU) assumed";
  if (!frequency) return TierRetention::kRecency;
  const bool ordered =
      std::all_of(slots.begin(), slots.end(), [](const TierSlot& s) { return s.popularity->non_increasing(); });
  if (!ordered) {
    note = "a slot's popularity is not ordered by index (its hottest keys are not its first): recency (LRU) assumed";
    return TierRetention::kRecency;
  }
  return TierRetention::kTopCapacity;
}

FastTierShape fast_tier_shape(const config::EmbeddingStorage& storage, double row_bytes) {
  EMBSCALE_EXPECTS(row_bytes > 0.0, "a row has bytes");
  const auto budget = static_cast<double>(storage.global_hbm_for_values);
  FastTierShape shape;
  shape.caching = storage.caching;
  if (!storage.caching) {
    const double table_bytes = static_cast<double>(storage.table.max_capacity) * row_bytes;
    shape.share = table_bytes > 0.0 ? std::min(1.0, budget / table_bytes) : 1.0;
    return shape;
  }
  const auto bucket = static_cast<double>(storage.table.bucket_capacity);
  shape.rows = std::max(bucket, std::floor(budget / row_bytes / bucket) * bucket);
  return shape;
}

double fast_tier_bytes(const config::EmbeddingStorage& storage, double keys, double row_bytes) {
  const auto shape = fast_tier_shape(storage, row_bytes);
  const double held = shape.keys_held(keys);
  if (held <= 0.0) return 0.0;
  config::EmbeddingStorage fast = storage;
  fast.table.max_capacity = static_cast<std::int64_t>(
      std::ceil(shape.caching ? shape.rows : shape.share * static_cast<double>(storage.table.max_capacity)));
  return kv_table_bytes(fast, held, row_bytes);
}

TierPrediction predict_fast_tier(const config::EmbeddingStorage& storage, double row_bytes,
                                 std::span<const TierSlot> slots, double steps, std::string& note) {
  const auto retention = tier_retention_of(storage, slots, note);
  const auto shape = fast_tier_shape(storage, row_bytes);
  if (retention == TierRetention::kHashShare) return hash_share_tier(slots, shape.share, steps);
  return retention == TierRetention::kTopCapacity ? top_capacity_tier(slots, shape.rows)
                                                  : recency_tier(slots, shape.rows);
}

}  // namespace embscale::plan
