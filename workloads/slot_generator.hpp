// One slot's bags: how many keys a (sample, slot) bag holds, which keys, and where they land in
// the unified encoding (the slot's offset + the mapped index).
//
// Determinism: a bag is a pure function of (seed, slot, bag stream, iteration's sampler). Draw
// attempt a of a bag reads counters [a 2^20, (a + 1) 2^20) of the bag's key stream (a rejection
// sampler's loop, however long, never reaches the next attempt's counters); its size reads the
// bag's nnz stream. So the bag is the same on any rank, and removing duplicates or redrawing them
// never shifts the keys of other bags.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "config/synthetic_source.hpp"
#include "core/batch.hpp"
#include "core/simd_level.hpp"
#include "workloads/key_permutation.hpp"
#include "workloads/key_source.hpp"

namespace embscale::workloads {

class SlotGenerator {
 public:
  // `space` keys starting at `offset` in the unified encoding; `seed` is the workload's seed.
  SlotGenerator(const config::SlotWorkload& workload, std::uint64_t space, Key offset, std::uint64_t seed,
                std::int32_t slot);

  // The distribution of iteration `iteration` (ask once per batch, not per bag).
  SharedSampler sampler_at(std::int64_t iteration) const { return source_->sampler_at(iteration); }

  // Appends the bag of `bag_stream` to `keys`: its size per the workload's nnz distribution
  // (distinct bags hold at most as many keys as `sampler` has), then its keys.
  void append_bag(const KeySampler& sampler, std::uint64_t bag_stream, std::vector<Key>& keys) const;

  // append_bag for each of `bag_streams` in turn, and each bag's size (after repeats are removed)
  // appended to `sizes`: the same keys, faster: the bags' first draws (first_draws) go through
  // the sampler's batch path together (KeySampler::draw_each) instead of one draw at a time.
  void append_bags(const KeySampler& sampler, std::span<const std::uint64_t> bag_streams, std::vector<Key>& keys,
                   std::vector<std::int64_t>& sizes) const;

  // The bag's size before repeats are removed, in [nnz_min, nnz] ([1, nnz] unless uniform), when
  // `keys_now` ids exist (DLRM's sizes stop at min(N, nnz)).
  std::int64_t bag_size(std::uint64_t bag_stream, std::uint64_t keys_now) const;

  // Multi-hot bags: companion `position` (>= 1) of a bag whose first key has index `first_index`,
  // a pure function of the two (MLPerf's per-id lookup table row, without the table).
  std::uint64_t companion(std::uint64_t first_index, std::int64_t position) const;
  // companion(heads[i], positions[i]) for every i, their draws computed in SIMD lanes at `level`.
  void companions_of(std::span<const std::uint64_t> heads, std::span<const std::int64_t> positions,
                     std::span<std::uint64_t> out, SimdLevel level = simd_level()) const;

  std::uint64_t space() const noexcept { return space_; }
  Key offset() const noexcept { return offset_; }
  // The unified key of sampled index `index` (the hottest is 0): the offset plus the mapped index.
  Key to_key(std::uint64_t index) const {
    return offset_ + static_cast<Key>(permutation_ ? (*permutation_)(index) : index);
  }

 private:
  // floor(Lomax) of a Pareto companion from its uniform, and its index (the floor modulo N).
  double pareto_lomax_floor(double uniform) const noexcept;
  std::uint64_t pareto_companion(double lomax_floor) const;
  // How many draws a bag of `size` keys takes before anything else (attempts 0, 1, ...): all its
  // keys, its head alone (companions), or as many as it wants distinct keys (it may draw more).
  std::int64_t first_draws(std::int64_t size, std::uint64_t keys_now) const;
  // Appends the bag of `size` keys whose first draws are `drawn` (and, for multi-hot bags, whose
  // companions are `companions`), drawing any further attempts (distinct bags) from `rng`, the
  // bag's key stream.
  void assemble_bag(const KeySampler& sampler, const CounterRng& rng, std::int64_t size,
                    std::span<const std::uint64_t> drawn, std::span<const std::uint64_t> companions,
                    std::vector<Key>& keys) const;
  void append_distinct(const KeySampler& sampler, const CounterRng& rng, std::int64_t size,
                       std::span<const std::uint64_t> drawn, std::vector<Key>& keys) const;

  config::SlotWorkload workload_;
  std::unique_ptr<const KeySource> source_;
  std::optional<KeyPermutation> permutation_;  // set for KeyMapping::kPermutation
  std::uint64_t space_;
  Key offset_;
  std::uint64_t key_seed_;
  std::uint64_t nnz_seed_;
  std::int32_t slot_;
  std::uint64_t companion_seed_;
  double minus_inverse_alpha_;    // -1 / pareto_alpha
  UniformBelow companion_index_;  // a uniform companion's index in [0, N)
};

// Removes the repeats of keys[first..], keeping the first of each key in its place (stable).
void remove_repeats(std::vector<Key>& keys, std::size_t first);

}  // namespace embscale::workloads
