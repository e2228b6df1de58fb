#include "workloads/slot_generator.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <unordered_set>

#include "core/cursor_lanes.hpp"
#include "core/error.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"
#include "core/vector_math.hpp"

namespace embscale::workloads {
namespace {

// Independent seeds per kind of value, so that changing the bag sizes, say, leaves the keys of
// every draw as they were.
constexpr std::uint64_t kKeyDomain = 1;
constexpr std::uint64_t kNnzDomain = 4;
constexpr std::uint64_t kPermutationDomain = 5;
constexpr std::uint64_t kCompanionDomain = 6;

// Each draw attempt owns a window of counters for its rejection loop; 2^20 per draw is far beyond
// any plausible rejection streak (every sampler accepts a draw with probability > 0.5).
constexpr int kCounterBitsPerDraw = 20;

// A distinct bag gives up after this many attempts per key it should hold: a distribution whose
// mass sits on fewer keys than the bag needs (an extreme exponent over a small slot) would
// otherwise redraw for ever.
constexpr std::uint64_t kDistinctAttemptsPerKey = std::uint64_t{1} << 16;
// ... and after this many draws in all (a few seconds), whatever the bag's size.
constexpr std::uint64_t kDistinctAttemptsPerBag = std::uint64_t{1} << 26;

// Up to this many keys a bag is searched linearly for a repeat; beyond it, through a hash set.
constexpr std::size_t kLinearSearchLimit = 64;

bool contains(const Key* first, const Key* last, Key key) { return std::find(first, last, key) != last; }

}  // namespace

SlotGenerator::SlotGenerator(const config::SlotWorkload& workload, std::uint64_t space, Key offset, std::uint64_t seed,
                             std::int32_t slot)
    : workload_(workload), source_(make_key_source(workload, space)), space_(space), offset_(offset),
      key_seed_(hash_combine(seed, kKeyDomain)), nnz_seed_(hash_combine(seed, kNnzDomain)), slot_(slot),
      companion_seed_(hash_combine(hash_combine(seed, kCompanionDomain), static_cast<std::uint64_t>(slot))),
      minus_inverse_alpha_(-1.0 / workload.multi_hot.pareto_alpha), companion_index_(space) {
  EMBSCALE_EXPECTS(workload.nnz >= 1 && workload.nnz_min >= 0 && workload.nnz_min <= workload.nnz,
                   "bag sizes need 0 <= nnz_min <= nnz, nnz >= 1");
  EMBSCALE_EXPECTS(workload.multi_hot.pareto_alpha >= config::kMinParetoAlpha,
                   "a Pareto companion's shape below kMinParetoAlpha overflows a double");
  if (workload.mapping == config::KeyMapping::kPermutation)
    permutation_.emplace(space, hash_combine(hash_combine(seed, kPermutationDomain), static_cast<std::uint64_t>(slot)));
}

std::int64_t SlotGenerator::bag_size(std::uint64_t bag_stream, std::uint64_t keys_now) const {
  const std::int64_t max = workload_.nnz;
  if (workload_.nnz_distribution == config::NnzDistribution::kFixed) return max;
  RngCursor rng(CounterRng(nnz_seed_, bag_stream));
  if (workload_.nnz_distribution == config::NnzDistribution::kUniform) {
    const std::int64_t min = workload_.nnz_min;
    return min + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(max - min + 1)));
  }
  // DLRM (dlrm_data_pytorch.py, random lengths): round(max(1, u min(N, L))) with u uniform in
  // [0, 1): 1 with probability 1.5 / min(N, L), every other size up to min(N, L) - 1 with
  // 1 / min(N, L), min(N, L) itself with 1 / (2 min(N, L)).
  const double limit = static_cast<double>(std::min<std::uint64_t>(keys_now, static_cast<std::uint64_t>(max)));
  return static_cast<std::int64_t>(std::nearbyint(std::max(1.0, rng.uniform() * limit)));
}

std::uint64_t SlotGenerator::companion(std::uint64_t first_index, std::int64_t position) const {
  // MLPerf's lookup table row first_index, without the table: a pure function of the first key.
  const CounterRng rng(companion_seed_, first_index);
  if (workload_.multi_hot.companions == config::Companions::kUniform) {
    RngCursor cursor(rng, static_cast<std::uint64_t>(position) << kCounterBitsPerDraw);
    return companion_index_(cursor);
  }
  // numpy's pareto(a) is Lomax: U^(-1/a) - 1 with U uniform in (0, 1]; MLPerf truncates it to an
  // integer and takes it modulo N (fmod: the remainder of the double exactly). numpy's int32 cast
  // sends the 2^(-31 a) of draws at or past 2^31 to INT32_MIN; here they stay where they fall.
  return pareto_companion(pareto_lomax_floor(rng.uniform(static_cast<std::uint64_t>(position))));
}

double SlotGenerator::pareto_lomax_floor(double uniform) const noexcept {
  // (1 - u)^(-1/a) as exp(-ln(1 - u) / a) with vector_math's exp and log: the batch path computes
  // the same bits in SIMD lanes. Its relative error (a few 10^-14 at the largest values) moves a
  // draw to the next integer only within that distance of one.
  return std::floor(vmath::vexp(vmath::vlog(1.0 - uniform) * minus_inverse_alpha_) - 1.0);
}

std::uint64_t SlotGenerator::pareto_companion(double lomax_floor) const {
  return static_cast<std::uint64_t>(std::fmod(lomax_floor, static_cast<double>(space_)));
}

void SlotGenerator::companions_of(std::span<const std::uint64_t> heads, std::span<const std::int64_t> positions,
                                  std::span<std::uint64_t> out, SimdLevel level) const {
  EMBSCALE_EXPECTS(heads.size() == positions.size() && heads.size() == out.size(),
                   "companions_of needs one position and one output per head");
  // companion(heads[i], positions[i]) for every i, their Philox draws in SIMD lanes (and the
  // Pareto power too); a uniform companion whose first draw Lemire's method rejects (a chance
  // below N / 2^64) is redone one at a time by companion().
  const bool uniform = workload_.multi_hot.companions == config::Companions::kUniform;
  CursorLanes lanes;
  lanes.seeds.fill(companion_seed_);
  std::array<double, CursorLanes::kLanes> lomax_floors;
  for (std::size_t first = 0; first < heads.size(); first += CursorLanes::kLanes) {
    const std::size_t count = std::min(CursorLanes::kLanes, heads.size() - first);
    for (std::size_t i = 0; i < count; ++i) {
      const auto position = static_cast<std::uint64_t>(positions[first + i]);
      lanes.streams[i] = heads[first + i];
      lanes.counters[i] = uniform ? position << kCounterBitsPerDraw : position;
    }
    lanes.draw_bits(count, level);
    if (uniform) {
      for (std::size_t i = 0; i < count; ++i) {
        const auto value = companion_index_.from_bits(lanes.bits[i]);
        out[first + i] = value ? *value : companion(heads[first + i], positions[first + i]);
      }
      continue;
    }
    const double minus_inverse_alpha = minus_inverse_alpha_;
    double* __restrict floors = lomax_floors.data();
    run_at(level, [&]() EMBSCALE_ALWAYS_INLINE {
      for (std::size_t i = 0; i < count; ++i)
        floors[i] = std::floor(vmath::vexp(vmath::vlog(1.0 - lanes.uniform(i)) * minus_inverse_alpha) - 1.0);
    });
    for (std::size_t i = 0; i < count; ++i) out[first + i] = pareto_companion(lomax_floors[i]);
  }
}

std::int64_t SlotGenerator::first_draws(std::int64_t size, std::uint64_t keys_now) const {
  if (workload_.bag_keys == config::BagKeys::kDistinct)
    return static_cast<std::int64_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(size), keys_now));
  if (workload_.multi_hot.companions != config::Companions::kNone) return std::min<std::int64_t>(size, 1);
  return size;
}

void SlotGenerator::append_bag(const KeySampler& sampler, std::uint64_t bag_stream, std::vector<Key>& keys) const {
  const CounterRng rng(key_seed_, bag_stream);
  const std::int64_t size = bag_size(bag_stream, sampler.space());
  std::vector<std::uint64_t> drawn(static_cast<std::size_t>(first_draws(size, sampler.space())));
  for (std::size_t a = 0; a < drawn.size(); ++a) {
    RngCursor cursor(rng, static_cast<std::uint64_t>(a) << kCounterBitsPerDraw);
    drawn[a] = sampler.draw(cursor);
  }
  std::vector<std::uint64_t> companions;
  if (workload_.multi_hot.companions != config::Companions::kNone)
    for (std::int64_t j = 1; j < size; ++j) companions.push_back(companion(drawn.front(), j));
  assemble_bag(sampler, rng, size, drawn, companions, keys);
}

void SlotGenerator::append_bags(const KeySampler& sampler, std::span<const std::uint64_t> bag_streams,
                                std::vector<Key>& keys, std::vector<std::int64_t>& sizes) const {
  // Bags in groups of about kDrawsPerGroup first draws: one draw_each call per group, in bounded memory.
  constexpr std::size_t kDrawsPerGroup = 16384;
  std::vector<RngCursor> cursors;
  std::vector<std::uint64_t> drawn;
  std::vector<std::int64_t> bag_sizes;  // the group's sizes before repeats are removed
  const bool with_companions =
      workload_.bag_keys != config::BagKeys::kDistinct && workload_.multi_hot.companions != config::Companions::kNone;
  std::vector<std::uint64_t> heads, companions;
  std::vector<std::int64_t> positions;
  for (std::size_t first_bag = 0; first_bag < bag_streams.size();) {
    cursors.clear();
    bag_sizes.clear();
    std::size_t bag = first_bag;
    for (; bag < bag_streams.size() && cursors.size() < kDrawsPerGroup; ++bag) {
      const CounterRng rng(key_seed_, bag_streams[bag]);
      const std::int64_t size = bag_size(bag_streams[bag], sampler.space());
      const std::int64_t draws = first_draws(size, sampler.space());
      for (std::int64_t a = 0; a < draws; ++a)
        cursors.emplace_back(rng, static_cast<std::uint64_t>(a) << kCounterBitsPerDraw);
      bag_sizes.push_back(size);
    }
    drawn.resize(cursors.size());
    sampler.draw_each(cursors, drawn);
    // Multi-hot bags: every companion of the group at once, behind the heads just drawn.
    heads.clear();
    positions.clear();
    if (with_companions) {
      std::size_t head = 0;
      for (const std::int64_t size : bag_sizes) {
        for (std::int64_t j = 1; j < size; ++j) heads.push_back(drawn[head]), positions.push_back(j);
        head += static_cast<std::size_t>(std::min<std::int64_t>(size, 1));
      }
      companions.resize(heads.size());
      companions_of(heads, positions, companions);
    }
    std::size_t next = 0, next_companion = 0;
    for (std::size_t b = 0; b < bag_sizes.size(); ++b) {
      const auto draws = static_cast<std::size_t>(first_draws(bag_sizes[b], sampler.space()));
      const std::size_t companion_count =
          with_companions ? static_cast<std::size_t>(std::max<std::int64_t>(bag_sizes[b] - 1, 0)) : 0;
      const std::size_t before = keys.size();
      assemble_bag(sampler, CounterRng(key_seed_, bag_streams[first_bag + b]), bag_sizes[b],
                   std::span<const std::uint64_t>(drawn).subspan(next, draws),
                   std::span<const std::uint64_t>(companions).subspan(next_companion, companion_count), keys);
      next += draws;
      next_companion += companion_count;
      sizes.push_back(static_cast<std::int64_t>(keys.size() - before));
    }
    first_bag = bag;
  }
}

void SlotGenerator::assemble_bag(const KeySampler& sampler, const CounterRng& rng, std::int64_t size,
                                 std::span<const std::uint64_t> drawn, std::span<const std::uint64_t> companions,
                                 std::vector<Key>& keys) const {
  if (workload_.bag_keys == config::BagKeys::kDistinct) {
    append_distinct(sampler, rng, size, drawn, keys);
    return;
  }
  const std::size_t first = keys.size();
  if (workload_.multi_hot.companions != config::Companions::kNone && size > 0) {
    keys.push_back(to_key(drawn.front()));
    for (const std::uint64_t index : companions) keys.push_back(to_key(index));
  } else {
    for (const std::uint64_t index : drawn) keys.push_back(to_key(index));
  }
  if (workload_.bag_keys == config::BagKeys::kDedup) remove_repeats(keys, first);
}

void SlotGenerator::append_distinct(const KeySampler& sampler, const CounterRng& rng, std::int64_t size,
                                    std::span<const std::uint64_t> drawn, std::vector<Key>& keys) const {
  // Draws continue until the bag holds `size` distinct keys, at most as many as exist now.
  const auto wanted =
      static_cast<std::size_t>(std::min<std::uint64_t>(static_cast<std::uint64_t>(size), sampler.space()));
  const std::uint64_t attempts =
      std::min(kDistinctAttemptsPerBag, kDistinctAttemptsPerKey * std::max<std::size_t>(wanted, 1));
  const std::size_t first = keys.size();
  std::unordered_set<Key> seen;
  for (std::uint64_t a = 0; a < attempts && keys.size() - first < wanted; ++a) {
    RngCursor cursor(rng, a << kCounterBitsPerDraw);
    const Key key = to_key(a < drawn.size() ? drawn[a] : sampler.draw(cursor));
    const std::size_t held = keys.size() - first;
    bool fresh = false;
    if (held < kLinearSearchLimit) {
      fresh = !contains(keys.data() + first, keys.data() + keys.size(), key);
    } else {
      if (seen.empty()) seen.insert(keys.begin() + static_cast<std::ptrdiff_t>(first), keys.end());
      fresh = seen.insert(key).second;
    }
    if (fresh) keys.push_back(key);
  }
  if (keys.size() - first < wanted)
    throw InputError(
        "synthetic: slot " + std::to_string(slot_) + " (" + std::to_string(sampler.space()) +
        " keys now): bag_keys \"distinct\" drew " + std::to_string(attempts) + " keys without finding " +
        std::to_string(wanted) +
        " distinct ones (the distribution's mass sits on fewer keys); lower nnz_per_slot or use \"dedup\"");
}

void remove_repeats(std::vector<Key>& keys, std::size_t first) {
  std::size_t kept = first;
  if (keys.size() - first <= kLinearSearchLimit) {
    for (std::size_t i = first; i < keys.size(); ++i)
      if (!contains(keys.data() + first, keys.data() + kept, keys[i])) keys[kept++] = keys[i];
  } else {
    std::unordered_set<Key> seen;
    for (std::size_t i = first; i < keys.size(); ++i)
      if (seen.insert(keys[i]).second) keys[kept++] = keys[i];
  }
  keys.resize(kept);
}

}  // namespace embscale::workloads
