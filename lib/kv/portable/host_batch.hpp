// The host's driver of the portable batch code (batch_ref.hpp): a batch grouped by bucket, its
// groups run one after another with a HostTile, and a rehash bucket by bucket. What the GPU's
// kernels (kernels/kv_table.cu) do with a radix sort and one tile per group, on one thread:
// PortableTable runs on it, and the GPU tests compare the device against it. Host only.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "core/hash.hpp"
#include "kv/portable/atomics.hpp"
#include "kv/portable/batch_ref.hpp"

namespace embscale::kv::portable {

// A batch's positions grouped by bucket, each group in input order.
struct BucketGroups {
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> offsets;  // groups + 1

  std::uint64_t groups() const noexcept { return offsets.empty() ? 0 : offsets.size() - 1; }
};

// The stable order of (bucket, position): what the device's radix sort computes.
inline BucketGroups group_by_bucket(std::span<const std::uint64_t> keys, std::uint64_t buckets) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tagged(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    tagged[i] = {mix64(keys[i]) & (buckets - 1), static_cast<std::uint32_t>(i)};
  std::sort(tagged.begin(), tagged.end());  // by bucket, then by position: input order kept
  BucketGroups g;
  g.order.reserve(keys.size());
  for (std::size_t i = 0; i < tagged.size(); ++i) {
    if (i == 0 || tagged[i].first != tagged[i - 1].first) g.offsets.push_back(static_cast<std::uint32_t>(i));
    g.order.push_back(tagged[i].second);
  }
  g.offsets.push_back(static_cast<std::uint32_t>(keys.size()));
  return g;
}

// The tile's lanes for a bucket capacity: the device's (a warp of 32, or 16 for 16-slot buckets).
inline unsigned tile_lanes_for(std::uint32_t bucket_capacity) { return bucket_capacity >= 32 ? 32u : 16u; }

template <unsigned Lanes> void run_groups_on_host(const TableState& state, const BatchRef& batch) {
  using Tile = HostTile<Lanes>;
  BatchRunner<Tile, HostAtomics> runner(state, batch);
  const Tile tile;
  const std::uint64_t groups = batch.order ? batch.groups : batch.size;
  for (std::uint64_t g = 0; g < groups; ++g) runner.run_group(tile, g);
}

// Every group of `batch` run on this thread (batch.order, when set, from group_by_bucket).
inline void run_batch_on_host(const TableState& state, const BatchRef& batch) {
  if (tile_lanes_for(state.arrays.bucket_capacity) == 32) run_groups_on_host<32>(state, batch);
  else run_groups_on_host<16>(state, batch);
}

template <unsigned Lanes> void rehash_with_lanes(const TableArrays& from, const TableArrays& to) {
  const HostTile<Lanes> tile;
  TableRef<HostTile<Lanes>, HostAtomics> target(to);
  for (std::uint64_t b = 0; b < from.buckets; ++b) target.move_bucket(tile, from, b);
}

// Every entry of `from` moved into `to` (its keys all empty), bucket by bucket.
inline void rehash_on_host(const TableArrays& from, const TableArrays& to) {
  if (tile_lanes_for(from.bucket_capacity) == 32) rehash_with_lanes<32>(from, to);
  else rehash_with_lanes<16>(from, to);
}

}  // namespace embscale::kv::portable
