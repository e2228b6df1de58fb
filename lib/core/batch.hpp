// Batch: the input every embedding layer consumes, one rank's share of one global batch.
//
// Layout (sample-major CSR, as HugeCTR's Norm format stores samples):
//   bag b = sample * num_slots + slot holds keys[offsets[b] .. offsets[b + 1]).
//   offsets.size() == num_samples * num_slots + 1, offsets.front() == 0, non-decreasing.
// Keys are "unified encoded" (HugeCTR's documentation): every slot has its own key range, so a key identifies
// its slot. labels: num_samples * label_dim; dense: num_samples * dense_dim.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace embscale {

using Key = std::int64_t;

struct Batch {
  std::int64_t first_sample = 0;  // global index of this rank's first sample
  std::int64_t num_samples = 0;
  std::int32_t num_slots = 0;
  std::int32_t label_dim = 0;
  std::int32_t dense_dim = 0;
  std::vector<std::int64_t> offsets{0};
  std::vector<Key> keys;
  std::vector<float> labels;
  std::vector<float> dense;

  std::int64_t num_bags() const noexcept { return num_samples * num_slots; }
  std::span<const Key> bag(std::int64_t b) const noexcept {
    return std::span<const Key>(keys).subspan(static_cast<std::size_t>(offsets[b]),
                                              static_cast<std::size_t>(offsets[b + 1] - offsets[b]));
  }
};

// Checks the CSR invariants above; throws embscale::Error naming the first violation.
void validate_batch(const Batch& batch);

}  // namespace embscale
