// LoadSample: per-rank loads measured on the config's own batches, for the tables the analytic
// model (key_popularity.hpp) does not cover: a trace, or a generator with drift, id growth,
// multi-hot companions, bags without repeats or a law without a closed form. The skew-aware
// planner's "measured" path: it reads the run's first timed global batches (after the warm-up, in
// the order a run asks for them) from workloads::make_batch_source once, and counts for every
// slot and every ownership each rank's (key, bag) pairs and distinct keys, averaged over the
// batches. Exact for what it read; its error is the batches' sampling error
// (tests/plan/sampled_load_test.cpp holds it to the analytic loads where both exist).
#pragma once

#include <cstdint>
#include <vector>

#include "config/config.hpp"
#include "plan/table_load.hpp"

namespace embscale::plan {

// Global batches a sample reads (after the config's warm-up), fewer when they hold more than
// kSampleKeys key occurrences of the slots counted (but at least kMinSampleBatches).
inline constexpr std::int64_t kSampleBatches = 16;
inline constexpr std::int64_t kMinSampleBatches = 2;
inline constexpr std::int64_t kSampleKeys = std::int64_t{4} << 20;

class LoadSample {
 public:
  // Reads min(batches, what the source holds after the warm-up) global batches of `config`'s
  // batch size (resolved for `ranks`) and counts the loads of `slots` (each slot's keys are hashed
  // a few times per occurrence: count only the slots that need it). InputError when the source
  // cannot be opened or holds no batch.
  // `over_sample`: also count the distinct keys of all batches together (distinct_over_sample).
  LoadSample(const config::Config& config, int ranks, const std::vector<std::int32_t>& slots, bool over_sample,
             std::int64_t batches = kSampleBatches);

  std::int64_t batches() const noexcept { return batches_; }
  // Mean per-step loads of `slot`, one of the slots counted (kOneRank: the owner's, at rank 0).
  std::vector<RankLoad> loads(std::int32_t slot, Ownership ownership) const;
  // Mean keys per bag of `slot`.
  double bag_size(std::int32_t slot) const;
  // Distinct keys per rank over all the batches read together (with over_sample).
  std::vector<double> distinct_over_sample(std::int32_t slot, Ownership ownership) const;

 private:
  static constexpr int kOwnerships = 5;
  // [slot][ownership][rank]
  using Table = std::vector<std::vector<std::vector<double>>>;
  int ranks_;
  std::int64_t batches_ = 0;
  std::int64_t samples_ = 0;
  Table pairs_, distinct_, distinct_total_;
  // Per slot: its occurrences this batch as (key, the rank whose samples hold it), and with
  // over_sample the distinct ones of all batches.
  struct Occurrence {
    Key key;
    int requester;
    auto operator<=>(const Occurrence&) const = default;
  };
  // Adds the distinct keys of `occurrences` (sorted here) to `distinct`, and their pairs to
  // pairs_ when `count_pairs`.
  void count(std::size_t slot, std::vector<Occurrence>& occurrences, Table& distinct, bool count_pairs);
  std::vector<Key> offsets_;
  std::vector<std::int64_t> sizes_;
};

}  // namespace embscale::plan
