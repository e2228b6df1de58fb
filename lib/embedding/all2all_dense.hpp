// All2All dense embedding (SparseOperationKit, seed 000), model-parallel over `key % ranks`.
//
// Forward, on every rank:
//   route            de-duplicate the batch's keys and group them by owner
//   exchange_keys    alltoall of counts, alltoallv of keys to their owners
//   lookup           the owner gathers the rows of the keys it received
//   exchange_vectors alltoallv of the rows back to the requesters
//   pool             per (sample, slot) bag: sum or mean of its keys' rows (the combiner)
// Backward:
//   pool_backward    gradient of each distinct key = sum over its occurrences of its bag's
//                    gradient (divided by the bag size for mean)
//   exchange_grads   alltoallv of those gradients to the owners (the forward key layout)
//   update           SGD on the owner, row by row in source-rank order
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch.hpp"
#include "embedding/key_router.hpp"
#include "embedding/phase_clock.hpp"
#include "embedding/static_table.hpp"

namespace embscale::embedding {

struct StepCounters {
  std::int64_t keys = 0;          // key occurrences in this rank's batch
  std::int64_t unique_keys = 0;   // distinct keys this rank requested
  std::int64_t lookups = 0;       // keys this rank served as owner (its share of the load)
};

class All2AllDenseEmbedding {
 public:
  // In execution order; meanings short enough for a plot legend (README.md defines them fully).
  static constexpr std::array<PhaseDefinition, 8> kPhases = {{
      {"route", "de-duplicate this rank's keys, group them by owner (key % ranks)"},
      {"exchange_keys", "send each owner the keys it serves (counts, then keys)"},
      {"lookup", "the owner gathers the rows of the keys it received"},
      {"exchange_vectors", "send the rows back to the ranks that asked"},
      {"pool", "sum or mean of each bag's rows (the combiner)"},
      {"pool_backward", "each distinct key's gradient: summed over its bags"},
      {"exchange_grads", "send each key's gradient to its owner"},
      {"update", "the owner applies the optimizer (SGD) to its rows"},
  }};

  // What `phase` covers, or nullptr when this scheme records no such phase.
  static const char* phase_meaning(std::string_view phase) noexcept { return meaning_of(kPhases, phase); }

  All2AllDenseEmbedding(comm::Communicator& comm, const config::EmbeddingLayer& layer,
                        std::int64_t vocabulary, std::uint64_t seed);

  // pooled: [batch.num_bags(), dim], row b is bag b's combined vector.
  void forward(const Batch& batch, std::span<float> pooled, PhaseClock& clock);
  // grad_pooled: [batch.num_bags(), dim], dLoss/dpooled of the last forward's batch.
  void backward(const Batch& batch, std::span<const float> grad_pooled, PhaseClock& clock);

  std::int32_t dim() const noexcept { return table_.dim(); }
  const ShardedStaticTable& table() const noexcept { return table_; }
  const StepCounters& counters() const noexcept { return counters_; }

 private:
  comm::Communicator& comm_;
  config::EmbeddingLayer layer_;
  ShardedStaticTable table_;
  StepCounters counters_;
  KeyRouter router_;                  // its scratch persists: a steady step allocates nothing
  // State carried from forward to backward.
  RoutedKeys routed_;
  std::vector<std::size_t> recv_counts_;
  std::vector<Key> recv_keys_;
  std::vector<float> vectors_;        // rows of routed_.send_keys, as returned by the owners
  std::vector<float> owner_rows_;     // scratch: rows gathered for recv_keys_ / their gradients
};

}  // namespace embscale::embedding
