// BatchSource: where a run's batches come from. The synthetic generator (workloads/synthetic.hpp)
// and the trace readers (workloads/trace_batch_source.hpp) implement it; the embedding engine
// (lib/embedding) consumes it and never constructs one, so a new data source is one class plus
// its case in workloads' make_batch_source.
//
// Contract: the run asks for the warm-up iterations -1, -2, ..., -W in that order, then the timed
// iterations 0, 1, ..., N-1 in order, on every rank with the same `ranks`. A rank receives exactly
// its share of the global batch (workloads::sample_share: contiguous samples, the first
// global % ranks ranks one more), and the shares of one iteration concatenate to the same global
// batch whatever the number of ranks: the basis of comparing a run with a single-process reference.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/batch.hpp"

namespace embscale {

// The contiguous share of `global` samples that `rank` of `ranks` receives: the first
// global % ranks ranks take one sample more.
struct SampleShare {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
inline SampleShare sample_share_of(std::int64_t global, int rank, int ranks) noexcept {
  const std::int64_t base = global / ranks, extra = global % ranks;
  const std::int64_t first = rank * base + (rank < extra ? rank : extra);
  return {first, base + (rank < extra ? 1 : 0)};
}

class BatchSource {
 public:
  // iterations_available() of a source that never runs out.
  static constexpr std::int64_t kUnbounded = -1;

  virtual ~BatchSource() = default;

  // This rank's share of the global batch of `iteration` (see the contract above).
  virtual Batch next_batch(std::int64_t iteration, int rank, int ranks) = 0;
  // How many iterations (warm-up and timed together) of `global_batch` samples this source can
  // serve, or kUnbounded.
  virtual std::int64_t iterations_available(std::int64_t global_batch) const = 0;
  // The key space (unified encoding): slot j's keys lie in [offset_j, offset_j + slot_sizes[j]),
  // offset_j the sum of the sizes before j.
  virtual const std::vector<std::int64_t>& slot_sizes() const = 0;
  // For messages: "the synthetic generator", "trace data/file_list.txt (Norm)".
  virtual std::string describe() const = 0;
};

}  // namespace embscale
