#include "embedding/all2all_dense.hpp"

#include <algorithm>

#include "core/error.hpp"

namespace embscale::embedding {

All2AllDenseEmbedding::All2AllDenseEmbedding(comm::Communicator& comm, const config::EmbeddingLayer& layer,
                                             std::int64_t vocabulary, std::uint64_t seed)
    : comm_(comm), layer_(layer),
      table_(comm.rank(), comm.size(), vocabulary, layer.embedding_vec_size, layer.max_vocabulary_size_per_gpu,
             UniformInitializer::for_vocabulary(seed, vocabulary)) {}

void All2AllDenseEmbedding::forward(const Batch& batch, std::span<float> pooled, PhaseClock& clock) {
  const auto dim = static_cast<std::size_t>(table_.dim());
  EMBSCALE_EXPECTS(pooled.size() == static_cast<std::size_t>(batch.num_bags()) * dim, "pooled output has the wrong size");

  router_.route(batch.keys, table_.sharding(), routed_);
  clock.lap("route");

  recv_counts_.assign(routed_.send_counts.size(), 0);
  comm_.alltoall(std::span<const std::size_t>(routed_.send_counts), std::span<std::size_t>(recv_counts_), 1);
  std::size_t total_recv = 0;
  for (const auto c : recv_counts_) total_recv += c;
  recv_keys_.resize(total_recv);
  comm_.alltoallv(std::span<const Key>(routed_.send_keys), std::span<const std::size_t>(routed_.send_counts),
                  std::span<Key>(recv_keys_), std::span<const std::size_t>(recv_counts_));
  clock.lap("exchange_keys");

  owner_rows_.resize(total_recv * dim);
  table_.gather(recv_keys_, owner_rows_);
  clock.lap("lookup");

  vectors_.resize(routed_.send_keys.size() * dim);
  comm_.alltoallv(std::span<const float>(owner_rows_), std::span<const std::size_t>(recv_counts_),
                  std::span<float>(vectors_), std::span<const std::size_t>(routed_.send_counts), dim);
  clock.lap("exchange_vectors");

  const bool mean = layer_.combiner == config::Combiner::kMean;
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    float* out = pooled.data() + static_cast<std::size_t>(b) * dim;
    std::fill(out, out + dim, 0.0f);
    const auto first = batch.offsets[static_cast<std::size_t>(b)];
    const auto last = batch.offsets[static_cast<std::size_t>(b) + 1];
    for (auto k = first; k < last; ++k) {
      const float* v = vectors_.data() + routed_.inverse[static_cast<std::size_t>(k)] * dim;
      for (std::size_t d = 0; d < dim; ++d) out[d] += v[d];
    }
    if (mean && last > first) {
      const float scale = 1.0f / static_cast<float>(last - first);
      for (std::size_t d = 0; d < dim; ++d) out[d] *= scale;
    }
  }
  clock.lap("pool");

  counters_.keys = static_cast<std::int64_t>(batch.keys.size());
  counters_.unique_keys = static_cast<std::int64_t>(routed_.send_keys.size());
  counters_.lookups = static_cast<std::int64_t>(total_recv);
}

void All2AllDenseEmbedding::backward(const Batch& batch, std::span<const float> grad_pooled, PhaseClock& clock) {
  const auto dim = static_cast<std::size_t>(table_.dim());
  EMBSCALE_EXPECTS(grad_pooled.size() == static_cast<std::size_t>(batch.num_bags()) * dim,
                   "pooled gradient has the wrong size");
  EMBSCALE_EXPECTS(routed_.inverse.size() == batch.keys.size(), "backward needs the forward of the same batch");

  // vectors_ is reused for the per-key gradients: same layout as the rows it held.
  std::fill(vectors_.begin(), vectors_.end(), 0.0f);
  const bool mean = layer_.combiner == config::Combiner::kMean;
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const auto first = batch.offsets[static_cast<std::size_t>(b)];
    const auto last = batch.offsets[static_cast<std::size_t>(b) + 1];
    if (last == first) continue;
    const float scale = mean ? 1.0f / static_cast<float>(last - first) : 1.0f;
    const float* g = grad_pooled.data() + static_cast<std::size_t>(b) * dim;
    for (auto k = first; k < last; ++k) {
      float* out = vectors_.data() + routed_.inverse[static_cast<std::size_t>(k)] * dim;
      for (std::size_t d = 0; d < dim; ++d) out[d] += scale * g[d];
    }
  }
  clock.lap("pool_backward");

  comm_.alltoallv(std::span<const float>(vectors_), std::span<const std::size_t>(routed_.send_counts),
                  std::span<float>(owner_rows_), std::span<const std::size_t>(recv_counts_), dim);
  clock.lap("exchange_grads");

  table_.apply_sgd(recv_keys_, owner_rows_, static_cast<float>(layer_.optimizer.learning_rate));
  clock.lap("update");
}

}  // namespace embscale::embedding
