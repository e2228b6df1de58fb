// The Synthetic data source: batches of unified-encoded keys, each slot's drawn by its own
// SlotGenerator (the config's synthetic block: distribution, drift, growth, mapping, bag sizes),
// plus labels and dense features.
//
// Determinism: every value is a pure function of (seed, global sample index, slot, position), so
// the global batch of an iteration is the same whatever the number of ranks, and a rank
// generates exactly its share (samples [first, first + count) of the global batch) without
// generating the others. As a BatchSource (core/batch_source.hpp) it never runs out.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/batch.hpp"
#include "core/batch_source.hpp"
#include "workloads/planted_labels.hpp"
#include "workloads/slot_generator.hpp"

namespace embscale::workloads {

// The contiguous share of `global` samples owned by `rank` of `ranks`: the first global % ranks
// ranks take one extra sample.
struct SampleRange {
  std::int64_t first = 0;
  std::int64_t count = 0;
};
SampleRange sample_share(std::int64_t global, int rank, int ranks);

class SyntheticGenerator final : public BatchSource {
 public:
  // `seed` draws the samples; `label_model_seed` the planted label model's hidden values (the
  // same model for a held-out stream of other samples: evaluation's); absent: `seed`. The
  // config's labels.seed, when set, wins over both.
  SyntheticGenerator(const config::DataLayer& data, std::uint64_t seed, std::int64_t global_batch,
                     std::optional<std::uint64_t> label_model_seed = std::nullopt);

  // BatchSource: next_batch is generate (a pure function of the iteration: any order works).
  Batch next_batch(std::int64_t iteration, int rank, int ranks) override { return generate(iteration, rank, ranks); }
  std::int64_t iterations_available(std::int64_t) const override { return kUnbounded; }
  const std::vector<std::int64_t>& slot_sizes() const override { return data_.slot_size_array; }
  std::string describe() const override { return "the synthetic generator"; }

  // This rank's share of the global batch of `iteration`. Warm-up iterations are negative (the
  // run driver numbers them -1, -2, ...): their batches are their own, drawn from iteration 0's
  // distribution (drift and growth start at iteration 0, the first timed one).
  Batch generate(std::int64_t iteration, int rank, int ranks) const;
  // Samples [first, first + count) of the global batch of `iteration`.
  Batch generate_range(std::int64_t iteration, SampleRange range) const;

  // Keys of slot j are slot_offset(j) + [0, slot_size_array[j]).
  Key slot_offset(std::int32_t slot) const { return slot_offsets_[static_cast<std::size_t>(slot)]; }
  std::int64_t total_vocabulary() const noexcept { return slot_offsets_.back(); }

 private:
  config::DataLayer data_;
  std::uint64_t seed_;
  std::int64_t global_batch_;
  std::vector<Key> slot_offsets_;         // prefix sums of slot_size_array, size slots + 1
  std::vector<SlotGenerator> slots_;      // one per slot
  std::optional<PlantedLabels> planted_;  // the planted label model, when the config asks for it
};

}  // namespace embscale::workloads
