// The independent reference for every scheme: one process, the whole global batch, no routing,
// no communication, no storage seam. Rows live in a std::map; pooling and the regression
// gradient are accumulated in double; each distinct key's gradient is applied once per step with
// the layer's SparseOptimizer (whose arithmetic tests/embedding/sparse_optimizer_test.cpp checks
// against the formulas). Column-wise layers keep one optimizer per column slice, as their shards
// are separate tables (row-wise AdaGrad's per-row state is per slice there, as in TorchRec).
#pragma once

#include <algorithm>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "config/config.hpp"
#include "core/batch.hpp"
#include "embedding/regression_objective.hpp"
#include "embedding/sparse_optimizer.hpp"
#include "kv/initializer.hpp"

namespace embscale::embedding::testing {

// The pooled vectors [bags x dim] of the global batch, in double: per bag the sum (mean: the
// average) of value(key, d) over its keys. An empty bag pools to zeros.
template <class Value>
std::vector<double> pool_global_batch(const Batch& global, std::size_t dim, bool mean, const Value& value) {
  std::vector<double> pooled(static_cast<std::size_t>(global.num_bags()) * dim, 0.0);
  for (std::int64_t b = 0; b < global.num_bags(); ++b) {
    const auto keys = global.bag(b);
    const double scale = mean && !keys.empty() ? 1.0 / static_cast<double>(keys.size()) : 1.0;
    for (const Key k : keys)
      for (std::size_t d = 0; d < dim; ++d) pooled[static_cast<std::size_t>(b) * dim + d] += scale * value(k, d);
  }
  return pooled;
}

// Each distinct key's gradient of the regression objective (regression_objective.hpp) over the
// global batch: dLoss/dpooled of every bag holding the key (mean: divided by the bag's size),
// summed over its occurrences.
inline std::map<Key, std::vector<double>> key_gradients(const Batch& global, std::span<const double> pooled,
                                                        std::size_t dim, bool mean, std::int64_t global_batch) {
  std::map<Key, std::vector<double>> grads;
  for (std::int64_t b = 0; b < global.num_bags(); ++b) {
    const auto keys = global.bag(b);
    const double scale = mean && !keys.empty() ? 1.0 / static_cast<double>(keys.size()) : 1.0;
    const double target = regression_target(global, b / global.num_slots);
    for (const Key k : keys) {
      auto& g = grads[k];
      g.resize(dim, 0.0);
      for (std::size_t d = 0; d < dim; ++d)
        g[d] += scale * (pooled[static_cast<std::size_t>(b) * dim + d] - target) / static_cast<double>(global_batch);
    }
  }
  return grads;
}

class ReferenceModel {
 public:
  // `slices`: the column widths the layer's rows are split into (one entry: whole rows).
  // `slot_sizes`, `slot_offsets`: the layer's slots; `global_batch` the samples per step.
  ReferenceModel(const config::EmbeddingLayer& layer, std::uint64_t seed, std::vector<std::int64_t> slot_sizes,
                 std::vector<Key> slot_offsets, std::int64_t global_batch, std::vector<std::int32_t> slices)
      : layer_(layer), seed_(seed), slot_sizes_(std::move(slot_sizes)), slot_offsets_(std::move(slot_offsets)),
        global_batch_(global_batch), dim_(static_cast<std::size_t>(layer.embedding_vec_size)),
        slices_(std::move(slices)) {
    for (const auto s : slot_sizes_) vocabulary_ += s;
    for (const auto width : slices_) optimizers_.push_back(make_sparse_optimizer(layer.optimizer, width));
  }

  // One step on the global batch (the layer's slots): forward, then (training) the update; returns
  // pooled [bags x dim].
  std::vector<float> step(const Batch& global) {
    ++steps_;
    const bool mean = layer_.combiner == config::Combiner::kMean;
    const std::vector<double> pooled =
        pool_global_batch(global, dim_, mean, [&](Key k, std::size_t d) { return value(k, d); });
    if (!layer_.storage.table.training) return std::vector<float>(pooled.begin(), pooled.end());  // evaluation
    const auto grads = key_gradients(global, pooled, dim_, mean, global_batch_);
    const bool global_update = optimizers_.front()->update_type() == UpdateType::kGlobal;  // every row, every step
    if (global_update)  // every row of the vocabulary exists in a static table
      for (std::size_t s = 0; s < slot_sizes_.size(); ++s)
        for (Key k = slot_offsets_[s]; k < slot_offsets_[s] + slot_sizes_[s]; ++k) row(k);
    for (auto& [key, shards] : rows_) {
      const auto it = grads.find(key);
      std::size_t first = 0;
      for (std::size_t c = 0; c < slices_.size(); ++c) {
        auto& shard = shards[c];
        const auto width = static_cast<std::size_t>(slices_[c]);
        const std::span<float> row(shard.data(), width), state(shard.data() + width, shard.size() - width);
        if (it != grads.end()) {
          std::vector<float> g(width);
          for (std::size_t d = 0; d < width; ++d) g[d] = static_cast<float>(it->second[first + d]);
          optimizers_[c]->update(row, state, g, steps_);
        } else if (global_update) {
          optimizers_[c]->update_untouched(row, state, steps_);
        }
        first += width;
      }
    }
    return std::vector<float>(pooled.begin(), pooled.end());
  }

  // The embedding values of `key` (dim), columns [first, first + count).
  std::vector<float> values(Key key, std::size_t first, std::size_t count) {
    std::vector<float> out;
    for (std::size_t d = first; d < first + count; ++d) out.push_back(static_cast<float>(value(key, d)));
    return out;
  }

 private:
  double value(Key key, std::size_t d) {
    auto& shards = row(key);
    for (std::size_t c = 0; c < slices_.size(); ++c) {
      const auto width = static_cast<std::size_t>(slices_[c]);
      if (d < width) return shards[c][d];
      d -= width;
    }
    return 0.0;
  }

  std::vector<std::vector<float>>& row(Key key) {
    auto it = rows_.find(key);
    if (it != rows_.end()) return it->second;
    kv::InitializerArgs init = layer_.storage.table.initializer;
    std::vector<float> full(dim_);
    kv::initial_row(init, seed_, vocabulary_, static_cast<std::uint64_t>(key), static_cast<std::int64_t>(dim_), full);
    std::vector<std::vector<float>> shards;
    std::size_t first = 0;
    for (std::size_t c = 0; c < slices_.size(); ++c) {
      const auto width = static_cast<std::size_t>(slices_[c]);
      std::vector<float> shard(full.begin() + static_cast<std::ptrdiff_t>(first),
                               full.begin() + static_cast<std::ptrdiff_t>(first + width));
      std::vector<float> state(static_cast<std::size_t>(optimizers_[c]->state_width()));
      optimizers_[c]->init_state(state);
      shard.insert(shard.end(), state.begin(), state.end());
      shards.push_back(std::move(shard));
      first += width;
    }
    return rows_.emplace(key, std::move(shards)).first->second;
  }

  config::EmbeddingLayer layer_;
  std::uint64_t seed_;
  std::vector<std::int64_t> slot_sizes_;
  std::vector<Key> slot_offsets_;
  std::int64_t global_batch_;
  std::size_t dim_;
  std::vector<std::int32_t> slices_;
  std::int64_t vocabulary_ = 0;
  std::int64_t steps_ = 0;
  std::vector<std::unique_ptr<SparseOptimizer>> optimizers_;
  std::map<Key, std::vector<std::vector<float>>> rows_;  // key -> per slice: values then state
};

}  // namespace embscale::embedding::testing
