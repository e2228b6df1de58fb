#include "core/batch.hpp"

#include <string>

#include "core/error.hpp"

namespace embscale {

void validate_batch(const Batch& batch) {
  EMBSCALE_EXPECTS(batch.num_samples >= 0 && batch.num_slots >= 0, "batch sizes must be >= 0");
  const auto bags = static_cast<std::size_t>(batch.num_bags());
  EMBSCALE_EXPECTS(
      batch.offsets.size() == bags + 1,
      "batch offsets must hold num_samples * num_slots + 1 entries, got " + std::to_string(batch.offsets.size()));
  EMBSCALE_EXPECTS(batch.offsets.front() == 0, "batch offsets must start at 0");
  for (std::size_t b = 0; b < bags; ++b)
    EMBSCALE_EXPECTS(batch.offsets[b] <= batch.offsets[b + 1],
                     "batch offsets must not decrease (bag " + std::to_string(b) + ")");
  EMBSCALE_EXPECTS(static_cast<std::size_t>(batch.offsets.back()) == batch.keys.size(),
                   "batch offsets must end at keys.size()");
  EMBSCALE_EXPECTS(batch.labels.size() == static_cast<std::size_t>(batch.num_samples * batch.label_dim),
                   "batch labels must hold num_samples * label_dim values");
  EMBSCALE_EXPECTS(batch.dense.size() == static_cast<std::size_t>(batch.num_samples * batch.dense_dim),
                   "batch dense must hold num_samples * dense_dim values");
}

}  // namespace embscale
