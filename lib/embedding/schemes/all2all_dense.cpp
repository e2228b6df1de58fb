// SOK's All2AllDenseEmbedding: a key lives on rank key % ranks; rows travel to the
// requesters, which pool.
//   route            de-duplicate this rank's keys (switchable), group them by owner
//   exchange_keys    alltoall of counts, alltoallv of keys to their owners
//   lookup           the owner reads the rows of the keys it received
//   exchange_vectors alltoallv of the rows back to the requesters
//   pool             per bag: sum or mean of its keys' rows
// Backward:
//   pool_backward    each routed key's gradient = sum over its occurrences of its bag's gradient
//   exchange_grads   alltoallv of those gradients to the owners (the forward key layout)
//   update           the owner combines the gradients of a key sent by several ranks (or, without
//                    de-duplication, several times) and applies the optimizer
#include <array>
#include <memory>

#include "embedding/device_all2all_dense.hpp"
#include "embedding/key_router.hpp"
#include "embedding/pooling.hpp"
#include "embedding/requester_pooling.hpp"
#include "embedding/scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {
namespace {

constexpr std::array<PhaseDefinition, 8> kPhases = {{
    {"route", "de-duplicate this rank's keys, group them by owner (key % ranks)"},
    {"exchange_keys", "send each owner the keys it serves (counts, then keys)", "alltoallv"},
    {"lookup", "the owner gathers the rows of the keys it received"},
    {"exchange_vectors", "send the rows back to the ranks that asked", "alltoallv"},
    {"pool", "sum or mean of each bag's rows (the combiner)"},
    {"pool_backward", "each distinct key's gradient: summed over its bags"},
    {"exchange_grads", "send each key's gradient to its owner", "alltoallv"},
    {"update", "the owner applies the optimizer to its rows"},
}};

class All2AllDense final : public EmbeddingScheme {
 public:
  explicit All2AllDense(const LayerSpec& spec)
      : spec_(spec), comm_(*spec.comm), ranks_(comm_.size()),
        store_(spec.make_store(spec.keys_modulo_ranks(), spec.dim())) {}

  std::span<const PhaseDefinition> phases() const noexcept override { return kPhases; }
  std::vector<const comm::Communicator*> communicators() const override { return {&comm_}; }
  const RowStore& store() const override { return *store_; }
  RowStore& store() override { return *store_; }

  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) override {
    const auto dim = static_cast<std::size_t>(spec_.dim());
    const int ranks = ranks_;
    router_.route(
        std::span<const Key>(batch.keys), ranks, [ranks](Key k) { return static_cast<int>(k % ranks); }, routed_,
        spec_.config->deduplicate ? Deduplication::kOn : Deduplication::kOff);
    recorder.lap("route");

    recv_counts_.assign(routed_.send_counts.size(), 0);
    comm_.alltoall(std::span<const std::size_t>(routed_.send_counts), std::span<std::size_t>(recv_counts_), 1);
    recv_keys_.resize(comm::total_count(recv_counts_));
    comm_.alltoallv(std::span<const Key>(routed_.send_keys), std::span<const std::size_t>(routed_.send_counts),
                    std::span<Key>(recv_keys_), std::span<const std::size_t>(recv_counts_));
    recorder.lap("exchange_keys");

    // The owner reads each distinct key it received once (several ranks may ask for one key).
    router_.route(
        std::span<const Key>(recv_keys_), 1, [](Key) { return 0; }, owner_distinct_);
    distinct_rows_.resize(owner_distinct_.send_keys.size() * dim);
    store_->read(owner_distinct_.send_keys, distinct_rows_);
    owner_rows_.resize(recv_keys_.size() * dim);
    for (std::size_t j = 0; j < recv_keys_.size(); ++j)
      std::copy_n(distinct_rows_.data() + owner_distinct_.inverse[j] * dim, dim, owner_rows_.data() + j * dim);
    recorder.lap("lookup");

    vectors_.resize(routed_.send_keys.size() * dim);
    comm_.alltoallv(std::span<const float>(owner_rows_), std::span<const std::size_t>(recv_counts_),
                    std::span<float>(vectors_), std::span<const std::size_t>(routed_.send_counts), dim);
    recorder.lap("exchange_vectors");

    pool_requested_rows(batch, routed_, vectors_, dim, spec_.mean(), pooled,
                        static_cast<std::int64_t>(owner_distinct_.send_keys.size()), recorder);
  }

  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    const auto dim = static_cast<std::size_t>(spec_.dim());
    unpool_bags(batch, routed_.inverse, grad_pooled, dim, spec_.mean(), vectors_);
    recorder.lap("pool_backward");

    comm_.alltoallv(std::span<const float>(vectors_), std::span<const std::size_t>(routed_.send_counts),
                    std::span<float>(owner_rows_), std::span<const std::size_t>(recv_counts_), dim);
    recorder.lap("exchange_grads");

    // Gradients of one key from several ranks are summed in source-rank order, then applied once.
    distinct_rows_.assign(owner_distinct_.send_keys.size() * dim, 0.0f);
    for (std::size_t j = 0; j < recv_keys_.size(); ++j) {
      float* g = distinct_rows_.data() + owner_distinct_.inverse[j] * dim;
      const float* from = owner_rows_.data() + j * dim;
      for (std::size_t d = 0; d < dim; ++d) g[d] += from[d];
    }
    store_->apply(owner_distinct_.send_keys, distinct_rows_, *spec_.optimizer, step);
    recorder.lap("update");
  }

 private:
  LayerSpec spec_;
  comm::Communicator& comm_;
  int ranks_;
  std::unique_ptr<RowStore> store_;
  // State carried from forward to backward.
  KeyRouter router_;
  RoutedKeys routed_;
  std::vector<std::size_t> recv_counts_;
  std::vector<Key> recv_keys_;
  RoutedKeys owner_distinct_;         // the received keys, de-duplicated
  std::vector<float> distinct_rows_;  // their rows; backward: their combined gradients
  std::vector<float> owner_rows_;     // rows (backward: gradients) in received order
  std::vector<float> vectors_;        // rows of routed_.send_keys as returned by the owners
};

std::unique_ptr<EmbeddingScheme> make_all2all_dense(const LayerSpec& spec) {
  // On a GPU: the same placement, the data flow on the device (device_all2all_dense.hpp).
  if (!spec.context.on_host())
    return make_device_all2all_dense(spec, spec.make_store(spec.keys_modulo_ranks(), spec.dim()), kPhases);
  return std::make_unique<All2AllDense>(spec);
}

}  // namespace

SchemeEntry all2all_dense_scheme() {
  // Requesters pool the rows that travel: the planner models owners that pool, so it has no model.
  SchemeEntry entry{
      .name = "all2all_dense", .config_type = "All2AllDenseEmbedding", .origin = "SOK", .make = make_all2all_dense};
  entry.dedups_before_exchange = true;
  entry.most_rows = most_rows_modulo;
  entry.runs_on_device = true;
  return entry;
}

}  // namespace embscale::embedding
