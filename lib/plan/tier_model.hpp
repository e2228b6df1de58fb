// The fast tier of a dynamic layer's two-tier table (storage.caching or global_hbm_for_values:
// embedding/tiered_row_store.hpp) as the planner predicts it, per rank: the distinct keys a step
// asks the rank's table for, how many of them miss the fast tier (each a row read from the slow
// tier, and under caching one demoted back), and so its hit rate. The rank's table holds the keys
// of several slots (TierSlot: the slot's popularity, the share of its keys the rank owns, the draws
// per step that reach them); what is predicted is in the steady state (cold misses not counted).
//
// Three retentions, each the model the eviction study found for it
// (results/measurements/2026-11-24-eviction-oracles.md and -eviction-policies.md):
//   recency       LRU-like scores (TIMESTAMP, STEP, EPOCH_LRU; LFU without admission, whose counts
//                 restart when a key comes back): Che's approximation per step. The fast tier holds
//                 the keys asked for in the last T steps, T such that they number its capacity C:
//                   sum_s f_s D_s(d_s T) = C,  D_s(x) = sum_k 1 - (1 - p_k)^x (KeyPopularity),
//                 and a step's key misses when it was not asked for in the T steps before:
//                   misses = sum_s f_s (D_s(d_s (T + 1)) - D_s(d_s T)).
//                 (The bucketed table with STEP scores was within 0.1 point of global LRU.)
//   top_capacity  frequency retention with an admission filter (FREQUENCY, or LFU-like scores with
//                 k_count or tiny_lfu): the C keys most asked for are held, which no policy beats in
//                 the long run; the study measured 0.1 to 1.5 points below it (by filter).
//   hash_share    hybrid placement: a key is in the fast tier by its hash, a fixed share of every
//                 distribution's keys: misses = (1 - share) x lookups, and the fast tier's new keys
//                 (a run's average, share x D(steps) / steps).
#pragma once

#include <algorithm>
#include <span>
#include <string>

#include "config/config.hpp"
#include "plan/key_popularity.hpp"

namespace embscale::plan {

// One slot's keys in a rank's table: `owned_fraction` of the slot's key indices (1: a whole table
// or a replica; 1/P: a key-modulo share, taken as a thinning of the slot's popularity, exact in the
// tail and an approximation for the few hottest keys), asked for by `draws` draws of the slot's
// popularity per step (whose owned keys come to this rank).
struct TierSlot {
  const KeyPopularity* popularity = nullptr;
  double owned_fraction = 1.0;
  double draws = 0.0;
};

enum class TierRetention { kRecency, kTopCapacity, kHashShare };

std::string to_string(TierRetention retention);

struct TierPrediction {
  TierRetention retention = TierRetention::kRecency;
  double capacity = 0.0;   // fast-tier rows (caching), or the hash share of keys (hybrid)
  double lookups = 0.0;    // distinct keys per step the rank's table is asked for
  double misses = 0.0;     // of them, not in the fast tier
  double hit_rate = 1.0;   // 1 - misses / lookups (1 with no lookups)
  double held_keys = 0.0;  // keys in the fast tier (caching: at most capacity)
  // recency: the capacity is below a step's distinct keys, where Che's approximation does not hold
  // (predicted as a random capacity of the last step's keys: an upper bound, see recency_tier).
  bool below_one_step = false;
};

// Che's approximation for `capacity` rows of fast tier. Below a step's distinct keys the tier
// keeps part of the last step's keys only, in the order the table's calls give them scores; the
// prediction then assumes a random part. Measured (2 ranks, STEP, 2,048 rows against 4,848 keys a
// step): 0.065 where this predicts 0.101: the present keys, scored before the new ones inside a
// call, are evicted first. Above it (8 and 32 times the rows), 0.1 to 0.3 points from the
// measured rate (tests/cli/plan_test.sh, plan_tiers).
TierPrediction recency_tier(std::span<const TierSlot> slots, double capacity);
// The `capacity` keys most asked for (by draws x probability). Every slot's popularity must be
// non_increasing (its most popular keys its first indices).
TierPrediction top_capacity_tier(std::span<const TierSlot> slots, double capacity);
// A `share` in [0, 1] of the keys in the fast tier by hash, over a run of `steps` steps: the keys
// the hash places in the slow tier miss, and the fast tier's keys the first time they come (the
// fast tier holds every key it has seen: its misses fall as the run goes on, D(steps) / steps a
// step on average).
TierPrediction hash_share_tier(std::span<const TierSlot> slots, double share, double steps);

// The retention a layer's storage has (its score strategy, admission and placement), and in
// `note` what the prediction assumes where no model fits exactly (CUSTOMIZED scores: recency
// assumed; a popularity not ordered by index: recency instead of the top capacity).
TierRetention tier_retention_of(const config::EmbeddingStorage& storage, std::span<const TierSlot> slots,
                                std::string& note);

// The fast tier `storage` makes, as make_tiered_row_store does (`row_bytes`: a stored row with its
// optimizer state): caching, `rows` rows (the budget's whole buckets, at least one); hybrid, the
// `share` of max_capacity rows the budget holds.
struct FastTierShape {
  bool caching = true;
  double rows = 0.0;   // caching
  double share = 0.0;  // hybrid
  // Of a rank's `keys` keys, those in the fast tier.
  double keys_held(double keys) const { return caching ? std::min(rows, keys) : share * keys; }
};
FastTierShape fast_tier_shape(const config::EmbeddingStorage& storage, double row_bytes);
// The memory of a two-tier layer's fast tier on a rank of `keys` keys: its KV table holding what
// fits of them (memory_model.hpp's kv_table_bytes, the fast table's max_capacity its rows).
double fast_tier_bytes(const config::EmbeddingStorage& storage, double keys, double row_bytes);

// The fast tier of `storage` for a rank's slots (fast_tier_shape's capacity) in a run of `steps`
// steps (hash share only: the others are their steady state).
TierPrediction predict_fast_tier(const config::EmbeddingStorage& storage, double row_bytes,
                                 std::span<const TierSlot> slots, double steps, std::string& note);

}  // namespace embscale::plan
