// The reference for layers on dynamic storage that evicts (engine_eviction_mpi_test.cpp): one
// table per rank, each the KV table's own reference model (tests/kv/reference_table.hpp: a
// std::map per bucket, one key at a time, held to HostTable by the KV conformance suite) with the
// options the engine gives that rank's table, fed the calls the rank's KvRowStore makes, in the
// same order. The calls are derived from the global batch and the scheme's owner function alone,
// with no routing, exchange or storage code of the engine:
//   forward   owner r: one find_or_insert of the distinct keys r owns, in order of their first
//             occurrence in the global batch. The owner receives its keys grouped by source rank
//             in rank order, each source's in its batch order (all2all_dense's router keeps the
//             first-occurrence order within an owner's group; the pooled schemes send every
//             occurrence in bag order), and de-duplicates in order of first occurrence. Rank s's
//             batch is the global batch's samples [first_s, first_s + count_s), contiguous and
//             ascending in s, so that concatenation is the global batch's order on any number of
//             ranks.
//   pooling   every occurrence reads the row its owner's call returned: a refused key zeros, a key
//             that a later key of the same call evicted the row it was inserted with.
//   backward  owner r, the same keys in the same order: each key still held gets the optimizer
//             with its gradient summed over the global batch (KvRowStore::apply: find, update,
//             assign, none of which changes a score); a key evicted since its read loses its
//             update. Global update type (an optimizer that moves untouched rows): every other
//             held row gets update_untouched.
// Pooling and the gradients are reference_model.hpp's, in double.
#pragma once

#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "config/config.hpp"
#include "core/batch.hpp"
#include "embedding/reference_model.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "kv/reference_table.hpp"
#include "kv/table_options.hpp"

namespace embscale::embedding::testing {

// The rank's key reads and what its table did (results/schema.md's table counters).
struct ReferenceCounters {
  std::int64_t hits = 0, misses = 0, inserts = 0, evictions = 0, refused = 0;
};

// The options of a rank's table: the layer's storage block completed as the storage contract
// says (lib/embedding/README.md "Storage"): the layer's dim, training with the optimizer's state
// beside the row (its initial state written by the initializer), the table seed, and the layer's
// key count for the initializer's default bounds.
inline kv::TableOptions reference_table_options(const config::EmbeddingLayer& layer, std::uint64_t seed,
                                                std::int64_t vocabulary) {
  const auto optimizer = make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size);
  kv::TableOptions o = layer.storage.table;
  o.dim = layer.embedding_vec_size;
  o.training = true;
  o.optimizer_state_width = optimizer->state_width();
  o.seed = seed;
  o.num_embeddings = vocabulary;
  o.initializer.initial_state.assign(static_cast<std::size_t>(optimizer->state_width()), 0.0f);
  optimizer->init_state(o.initializer.initial_state);
  return o;
}

class EvictionReference {
 public:
  // owner(key, layer slot) -> rank in [0, ranks).
  using Owner = std::function<int(Key key, std::int32_t slot)>;

  EvictionReference(const config::EmbeddingLayer& layer, const kv::TableOptions& options, int ranks, Owner owner,
                    std::int64_t global_batch)
      : dim_(static_cast<std::size_t>(layer.embedding_vec_size)), mean_(layer.combiner == config::Combiner::kMean),
        global_batch_(global_batch), owner_(std::move(owner)),
        optimizer_(make_sparse_optimizer(layer.optimizer, layer.embedding_vec_size)),
        counters_(static_cast<std::size_t>(ranks)) {
    for (int r = 0; r < ranks; ++r) tables_.emplace_back(options);
  }

  // One training step on the global batch; returns pooled [bags x dim].
  std::vector<float> step(const Batch& global) {
    ++steps_;
    const std::vector<std::vector<std::uint64_t>> reads = owner_reads(global);
    std::map<Key, std::vector<double>> read_rows;  // each key has one owner
    std::vector<float> out;
    std::vector<std::uint8_t> founds;
    for (std::size_t r = 0; r < tables_.size(); ++r) {
      const kv::CallStats st = tables_[r].find_or_insert(reads[r], out, founds, {});
      ReferenceCounters& c = counters_[r];
      c.hits += st.found;
      c.misses += static_cast<std::int64_t>(reads[r].size()) - st.found;
      c.inserts += st.inserted;
      c.evictions += st.evicted;
      c.refused += st.refused;
      const auto width = static_cast<std::size_t>(tables_[r].width());
      for (std::size_t i = 0; i < reads[r].size(); ++i)
        read_rows[static_cast<Key>(reads[r][i])].assign(out.begin() + static_cast<std::ptrdiff_t>(i * width),
                                                        out.begin() + static_cast<std::ptrdiff_t>(i * width + dim_));
    }
    const std::vector<double> pooled =
        pool_global_batch(global, dim_, mean_, [&](Key k, std::size_t d) { return read_rows.at(k)[d]; });
    const auto grads = key_gradients(global, pooled, dim_, mean_, global_batch_);
    for (std::size_t r = 0; r < tables_.size(); ++r) apply(tables_[r], reads[r], grads);
    return std::vector<float>(pooled.begin(), pooled.end());
  }

  const kv::testing::ReferenceTable& table(int rank) const { return tables_[static_cast<std::size_t>(rank)]; }
  // Summed over the steps so far.
  const ReferenceCounters& counters(int rank) const { return counters_[static_cast<std::size_t>(rank)]; }

 private:
  // Per owner: the distinct keys it owns in order of first occurrence in the global batch.
  std::vector<std::vector<std::uint64_t>> owner_reads(const Batch& global) const {
    std::vector<std::vector<std::uint64_t>> reads(tables_.size());
    std::map<Key, bool> seen;
    for (std::int64_t b = 0; b < global.num_bags(); ++b)
      for (const Key k : global.bag(b))
        if (seen.emplace(k, true).second)
          reads[static_cast<std::size_t>(owner_(k, static_cast<std::int32_t>(b % global.num_slots)))].push_back(
              static_cast<std::uint64_t>(k));
    return reads;
  }

  void apply(kv::testing::ReferenceTable& table, const std::vector<std::uint64_t>& keys,
             const std::map<Key, std::vector<double>>& grads) const {
    for (const std::uint64_t key : keys) {
      const auto* entry = table.lookup(key);
      if (!entry) continue;  // evicted by a later key of its own read
      std::vector<float> row = entry->row;
      const auto& g = grads.at(static_cast<Key>(key));
      const std::vector<float> grad(g.begin(), g.end());
      optimizer_->update(std::span<float>(row.data(), dim_), std::span<float>(row.data() + dim_, row.size() - dim_),
                         grad, steps_);
      table.assign(std::span<const std::uint64_t>(&key, 1), row);
    }
    if (optimizer_->update_type() != UpdateType::kGlobal || !optimizer_->changes_untouched_rows()) return;
    for (const auto& [key, entry] : table.entries()) {
      if (std::find(keys.begin(), keys.end(), key) != keys.end()) continue;
      std::vector<float> row = entry.row;
      optimizer_->update_untouched(std::span<float>(row.data(), dim_),
                                   std::span<float>(row.data() + dim_, row.size() - dim_), steps_);
      table.assign(std::span<const std::uint64_t>(&key, 1), row);
    }
  }

  std::size_t dim_;
  bool mean_;
  std::int64_t global_batch_;
  Owner owner_;
  std::unique_ptr<SparseOptimizer> optimizer_;
  std::vector<kv::testing::ReferenceTable> tables_;
  std::vector<ReferenceCounters> counters_;
  std::int64_t steps_ = 0;
};

}  // namespace embscale::embedding::testing
