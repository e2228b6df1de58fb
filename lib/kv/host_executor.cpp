#include "kv/host_executor.hpp"

#include <algorithm>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "kv/portable/host_batch.hpp"

namespace embscale::kv {

HostExecutor::HostExecutor(const TableGeometry& geometry) : geometry_(geometry) {}

portable::TableArrays HostExecutor::arrays() noexcept {
  portable::TableArrays a{keys_.data(),       scores_.data(), digests_.data(),
                          rows_.data(),       buckets_,       geometry_.bucket_capacity,
                          geometry_.row_width};
  a.far_rows = far_rows_.data();
  a.near_slots = geometry_.near_slots(buckets_);
  return a;
}

portable::SketchRef HostExecutor::sketch() noexcept {
  portable::SketchRef s = geometry_.sketch;
  s.buckets = buckets_;
  s.counters = counters_.empty() ? nullptr : counters_.data();
  s.sightings = sightings_.empty() ? nullptr : sightings_.data();
  return s;
}

void grow_sketch_banks(std::vector<std::uint8_t>& counters, std::vector<std::uint32_t>& sightings,
                       std::uint64_t blocks_per_bank, std::uint64_t buckets, std::uint64_t new_buckets) {
  const std::uint64_t bank_bytes = blocks_per_bank * portable::kSketchCountersPerBlock;
  std::vector<std::uint8_t> grown(new_buckets * bank_bytes, 0);
  std::vector<std::uint32_t> grown_sightings(new_buckets, 0);
  if (buckets > 0)
    for (std::uint64_t b = 0; b < new_buckets; ++b) {
      const std::uint64_t parent = b & (buckets - 1);
      std::copy_n(counters.begin() + static_cast<long>(parent * bank_bytes), bank_bytes,
                  grown.begin() + static_cast<long>(b * bank_bytes));
      grown_sightings[b] = sightings[parent];
    }
  counters = std::move(grown);
  sightings = std::move(grown_sightings);
}

void HostExecutor::resize(std::uint64_t buckets) {
  EMBSCALE_EXPECTS(buckets >= buckets_ && (buckets & (buckets - 1)) == 0, "a table grows by powers of two");
  const std::uint64_t slots = buckets * geometry_.bucket_capacity, near = geometry_.near_slots(buckets);
  std::vector<std::uint64_t> keys(slots, portable::kEmptyKey), scores(slots, 0);
  std::vector<std::uint8_t> digests(slots, 0);
  std::vector<float> rows(near * geometry_.row_width, 0.0f), far_rows((slots - near) * geometry_.row_width, 0.0f);
  portable::TableArrays to{
      keys.data(), scores.data(), digests.data(), rows.data(), buckets, geometry_.bucket_capacity, geometry_.row_width};
  to.far_rows = far_rows.data();
  to.near_slots = near;
  if (buckets_ > 0) portable::rehash_on_host(arrays(), to);
  keys_ = std::move(keys);
  scores_ = std::move(scores);
  digests_ = std::move(digests);
  rows_ = std::move(rows);
  far_rows_ = std::move(far_rows);
  if (geometry_.filter != portable::FilterKind::kNone)
    grow_sketch_banks(counters_, sightings_, geometry_.sketch.blocks, buckets_, buckets);
  buckets_ = buckets;
}

void HostExecutor::clear() {
  std::fill(keys_.begin(), keys_.end(), portable::kEmptyKey);
  std::fill(counters_.begin(), counters_.end(), std::uint8_t{0});
  std::fill(sightings_.begin(), sightings_.end(), 0u);
}

void HostExecutor::run(portable::TableState state, const portable::BatchRef& batch, bool grouped) {
  state.arrays = arrays();
  state.sketch = sketch();
  if (const char* problem = portable::batch_problem(state, batch))
    throw Error(std::string("GPU table batch: ") + problem);
  portable::BatchRef b = batch;
  portable::BucketGroups groups;
  if (grouped) {
    groups = portable::group_by_bucket({batch.keys, batch.size}, buckets_);
    b.order = groups.order.data();
    b.offsets = groups.offsets.data();
    b.groups = groups.groups();
  }
  portable::run_batch_on_host(state, b);
}

void HostExecutor::export_entries(std::uint64_t first, std::uint64_t end, std::uint64_t min_score,
                                  std::vector<std::uint64_t>& keys, std::vector<float>& values,
                                  std::vector<std::uint64_t>& scores) const {
  keys.clear();
  values.clear();
  scores.clear();
  const std::uint64_t w = geometry_.row_width;
  const portable::TableArrays a = const_cast<HostExecutor*>(this)->arrays();  // read only below
  for (std::uint64_t slot = first; slot < std::min<std::uint64_t>(end, keys_.size()); ++slot) {
    if (!portable::holds_key(keys_[slot]) || scores_[slot] < min_score) continue;
    keys.push_back(keys_[slot]);
    scores.push_back(scores_[slot]);
    const float* row = portable::row_of(a, slot);
    values.insert(values.end(), row, row + w);
  }
}

}  // namespace embscale::kv
