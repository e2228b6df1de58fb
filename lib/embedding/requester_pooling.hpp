// The last forward phase of a scheme whose rows come to the requester (all2all_dense: from their
// owners; data_parallel: from its own replica): pool each bag from the rows of its routed keys,
// and record the step's key counters, the same way for every such scheme.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "core/batch.hpp"
#include "embedding/key_router.hpp"
#include "embedding/pooling.hpp"
#include "embedding/step_recorder.hpp"

namespace embscale::embedding {

// `rows`: one row of `dim` values per routed key (routed.send_keys' order). Laps "pool"; counts
// keys (occurrences), unique_keys (the routed keys) and lookups (rows this rank looked up).
inline void pool_requested_rows(const Batch& batch, const RoutedKeys& routed, std::span<const float> rows,
                                std::size_t dim, bool mean, std::span<float> pooled, std::int64_t lookups,
                                StepRecorder& recorder) {
  pool_bags(batch, routed.inverse, rows, dim, mean, pooled);
  recorder.lap("pool");
  recorder.count("keys", static_cast<std::int64_t>(batch.keys.size()));
  recorder.count("unique_keys", static_cast<std::int64_t>(routed.send_keys.size()));
  recorder.count("lookups", lookups);
}

}  // namespace embscale::embedding
