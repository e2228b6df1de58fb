#include "embedding/pooled_exchange.hpp"

#include <algorithm>
#include <array>

#include "core/batch_source.hpp"
#include "core/error.hpp"
#include "embedding/pooling.hpp"

namespace embscale::embedding {
namespace {

constexpr PhaseDefinition kRoute{"route", "each key occurrence to its owner, with its bag's place there"};
constexpr PhaseDefinition kExchangeKeys{"exchange_keys", "send each owner its (key, bag) pairs", "alltoallv"};
constexpr PhaseDefinition kOwnerLookup{"lookup",
                                       "the owner de-duplicates its keys and finds their rows (copies unless fp32 "
                                       "static; evaluation on fp32 static: a row address per pair, no de-duplication)"};
constexpr PhaseDefinition kOwnerPool{"pool", "the owner sums each bag's rows (whole or partial bags)"};
constexpr PhaseDefinition kUnpack{"unpack", "received pooled vectors into bag order; mean: divide"};
constexpr PhaseDefinition kPoolBackward{"pool_backward", "each distinct key's gradient: summed over its bags"};
constexpr PhaseDefinition kUpdate{"update", "the owner applies the optimizer to its rows"};

constexpr PhaseDefinition kExchangePooled{"exchange_pooled", "send each rank the pooled bags of its samples",
                                          "alltoallv"};
constexpr PhaseDefinition kPackGrads{"pack_grads", "pooled gradients laid out for the owners (mean: divided)"};
constexpr PhaseDefinition kExchangeGrads{"exchange_grads", "send each owner the gradients of its bags", "alltoallv"};

// The outputs' own collectives.
constexpr PhaseDefinition kReduceScatter{"reduce_scatter", "sum the owners' partial bags; each rank gets its own",
                                         "reduce_scatter"};
constexpr PhaseDefinition kAllGather{"all_gather", "every owner gets the pooled gradients of all bags", "allgather"};
constexpr PhaseDefinition kReduceScatterNode{"reduce_scatter_node", "sum partial bags within the node",
                                             "reduce_scatter"};
constexpr PhaseDefinition kAllGatherNode{"all_gather_node", "the node's ranks share the pooled gradients", "allgather"};

constexpr std::array<PhaseDefinition, 10> kReduceScatterPhases = {{kRoute, kExchangeKeys, kOwnerLookup, kOwnerPool,
                                                                   kReduceScatter, kUnpack, kPackGrads, kAllGather,
                                                                   kPoolBackward, kUpdate}};
constexpr std::array<PhaseDefinition, 10> kAllToAllPhases = {{kRoute, kExchangeKeys, kOwnerLookup, kOwnerPool,
                                                              kExchangePooled, kUnpack, kPackGrads, kExchangeGrads,
                                                              kPoolBackward, kUpdate}};
constexpr std::array<PhaseDefinition, 12> kNodeThenCrossPhases = {
    {kRoute, kExchangeKeys, kOwnerLookup, kOwnerPool, kReduceScatterNode, kExchangePooled, kUnpack, kPackGrads,
     kExchangeGrads, kAllGatherNode, kPoolBackward, kUpdate}};

}  // namespace

std::span<const PhaseDefinition> pooled_phases(PooledOutput output) noexcept {
  switch (output) {
    case PooledOutput::kReduceScatter: return kReduceScatterPhases;
    case PooledOutput::kAllToAll: return kAllToAllPhases;
    case PooledOutput::kNodeThenCross: return kNodeThenCrossPhases;
  }
  return {};
}

PooledExchange::PooledExchange(const LayerSpec& spec, PooledPlan plan, RowStore& store)
    : spec_(spec), every_rank_gets_every_key_(plan.every_rank_gets_every_key), store_(store), comm_(*spec.comm),
      rank_(spec.comm->rank()), ranks_(spec.comm->size()), width_(static_cast<std::size_t>(store.dim())) {
  output_ = make_pooled_output(spec_, std::move(plan), width_);
  owner_buffer_.resize(output_->owner_buffer_size());
}

std::vector<const comm::Communicator*> PooledExchange::communicators() const { return output_->communicators(); }

void PooledExchange::prepare_step(const Batch& batch) {
  EMBSCALE_EXPECTS(
      batch.num_samples == sample_share_of(spec_.global_batch, rank_, ranks_).count && batch.num_slots == spec_.slots(),
      "a rank's batch is its share of the global batch, with the layer's slots");
}

void PooledExchange::exchange_and_pool(std::span<float> pooled, StepRecorder& recorder) {
  if (ranks_ > 1) {
    recv_counts_.assign(send_counts_.size(), 0);
    comm_.alltoall(std::span<const std::size_t>(send_counts_), std::span<std::size_t>(recv_counts_), 1);
    recv_pairs_.resize(comm::total_count(recv_counts_));
    comm_.alltoallv(std::span<const KeyPosition>(send_pairs_), std::span<const std::size_t>(send_counts_),
                    std::span<KeyPosition>(recv_pairs_), std::span<const std::size_t>(recv_counts_));
  }
  const std::vector<KeyPosition>& received = ranks_ > 1 ? recv_pairs_ : send_pairs_;  // one rank: sent to itself
  recorder.lap("exchange_keys");

  recv_keys_.resize(received.size());
  recv_positions_.resize(received.size());
  for (std::size_t j = 0; j < received.size(); ++j) {
    recv_keys_[j] = received[j].key;
    recv_positions_[j] = received[j].position;
  }
  // Evaluation mode with rows in place: every pair reads its row where it lies, as FBGEMM's
  // forward does. De-duplication would save only pointer computations (a repeated row is read
  // from cache) for a hash probe per pair; it is there for the backward (one gradient per
  // distinct key) and for stores whose reads cost (copies, the KV table).
  row_addresses_.resize(recv_keys_.size());
  const bool per_pair = !spec_.training() && store_.row_pointers(recv_keys_, row_addresses_);
  if (!per_pair) {
    router_.route(
        std::span<const Key>(recv_keys_), 1, [](Key) { return 0; }, distinct_);
    row_addresses_.resize(distinct_.send_keys.size());
  }
  const bool in_place = per_pair || store_.row_pointers(distinct_.send_keys, row_addresses_);
  if (!in_place) {
    rows_.resize(distinct_.send_keys.size() * width_);
    store_.read(distinct_.send_keys, rows_);
  }
  recorder.lap("lookup");

  const std::span<const float* const> addresses(row_addresses_);
  const std::span<float> sums = output_->owner_buffer_is_output() ? pooled : std::span<float>(owner_buffer_);
  if (per_pair) pool_pairs(recv_positions_, addresses, width_, sums, spec_.context.threads);
  else if (in_place) pool_pairs(recv_positions_, distinct_.inverse, addresses, width_, sums, spec_.context.threads);
  else
    pool_pairs(recv_positions_, distinct_.inverse, std::span<const float>(rows_), width_, sums, spec_.context.threads);
  recorder.lap("pool");
  recorder.count("pairs_sent", static_cast<std::int64_t>(send_pairs_.size()));
  recorder.count("pairs_received", static_cast<std::int64_t>(received.size()));
  recorder.count("lookups", static_cast<std::int64_t>(per_pair ? recv_keys_.size() : distinct_.send_keys.size()));
}

void PooledExchange::output_forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) {
  output_->forward(owner_buffer_, pooled, recorder);
  if (spec_.mean()) divide_by_bag_size(batch, static_cast<std::size_t>(spec_.dim()), pooled);
  recorder.lap("unpack");
}

void PooledExchange::backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                              StepRecorder& recorder) {
  const auto grads = gradients(batch, grad_pooled, recorder);
  store_.apply(distinct_.send_keys, grads, *spec_.optimizer, step);
  recorder.lap("update");
}

std::span<const float> PooledExchange::gradients(const Batch& batch, std::span<const float> grad_pooled,
                                                 StepRecorder& recorder) {
  std::span<const float> grad = grad_pooled;
  if (spec_.mean()) {  // divided in a copy: grad_pooled is the caller's
    grad_pooled_.assign(grad_pooled.begin(), grad_pooled.end());
    divide_by_bag_size(batch, static_cast<std::size_t>(spec_.dim()), grad_pooled_);
    grad = grad_pooled_;
  }
  // The gradients of the owner's pooled sums (the owner buffer's layout).
  const std::span<const float> sums_grad = output_->backward(grad, owner_buffer_, recorder);
  grads_.resize(distinct_.send_keys.size() * width_);
  unpool_pairs(recv_positions_, distinct_.inverse, sums_grad, width_, grads_, spec_.context.threads);
  recorder.lap("pool_backward");
  return grads_;
}

}  // namespace embscale::embedding
