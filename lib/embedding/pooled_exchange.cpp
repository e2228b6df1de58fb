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
constexpr PhaseDefinition kOwnerLookup{"lookup", "the owner de-duplicates its keys and finds their rows (copies unless fp32 static; evaluation on fp32 static: a row address per pair, no de-duplication)"};
constexpr PhaseDefinition kOwnerPool{"pool", "the owner sums each bag's rows (whole or partial bags)"};
constexpr PhaseDefinition kUnpack{"unpack", "received pooled vectors into bag order; mean: divide"};
constexpr PhaseDefinition kPoolBackward{"pool_backward", "each distinct key's gradient: summed over its bags"};
constexpr PhaseDefinition kUpdate{"update", "the owner applies the optimizer to its rows"};

constexpr PhaseDefinition kExchangePooled{"exchange_pooled", "send each rank the pooled bags of its samples", "alltoallv"};
constexpr PhaseDefinition kPackGrads{"pack_grads", "pooled gradients laid out for the owners (mean: divided)"};
constexpr PhaseDefinition kExchangeGrads{"exchange_grads", "send each owner the gradients of its bags", "alltoallv"};

constexpr std::array<PhaseDefinition, 10> kReduceScatterPhases = {{
    kRoute, kExchangeKeys, kOwnerLookup, kOwnerPool,
    {"reduce_scatter", "sum the owners' partial bags; each rank gets its own", "reduce_scatter"},
    kUnpack, kPackGrads,
    {"all_gather", "every owner gets the pooled gradients of all bags", "allgather"},
    kPoolBackward, kUpdate}};

constexpr std::array<PhaseDefinition, 10> kAllToAllPhases = {{
    kRoute, kExchangeKeys, kOwnerLookup, kOwnerPool, kExchangePooled, kUnpack, kPackGrads, kExchangeGrads,
    kPoolBackward, kUpdate}};

constexpr std::array<PhaseDefinition, 12> kNodeThenCrossPhases = {{
    kRoute, kExchangeKeys, kOwnerLookup, kOwnerPool,
    {"reduce_scatter_node", "sum partial bags within the node", "reduce_scatter"},
    kExchangePooled, kUnpack, kPackGrads, kExchangeGrads,
    {"all_gather_node", "the node's ranks share the pooled gradients", "allgather"},
    kPoolBackward, kUpdate}};

std::size_t total(const std::vector<std::size_t>& counts) {
  std::size_t n = 0;
  for (const auto c : counts) n += c;
  return n;
}

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
    : spec_(spec), plan_(std::move(plan)), store_(store), comm_(*spec.comm), rank_(spec.comm->rank()),
      ranks_(spec.comm->size()), width_(static_cast<std::size_t>(store.dim())) {
  const auto S = spec_.slots();
  const auto samples = [&](int r) { return sample_share_of(spec_.global_batch, r, ranks_).count; };
  const auto index_table = [&](const std::vector<std::int32_t>& owned) {
    std::vector<std::int32_t> index(static_cast<std::size_t>(S), -1);
    for (std::size_t t = 0; t < owned.size(); ++t) index[static_cast<std::size_t>(owned[t])] = static_cast<std::int32_t>(t);
    return index;
  };
  base_.assign(static_cast<std::size_t>(ranks_), 0);
  switch (plan_.output) {
    case PooledOutput::kReduceScatter:
      // One group: the global batch's bags in sample order.
      plan_.owner_slots.assign(1, {});
      for (std::int32_t s = 0; s < S; ++s) plan_.owner_slots[0].push_back(s);
      slot_index_.assign(1, index_table(plan_.owner_slots[0]));
      std::fill(base_.begin(), base_.end(), sample_share_of(spec_.global_batch, rank_, ranks_).first * S);
      out_.resize(static_cast<std::size_t>(spec_.global_batch * S) * width_);
      break;
    case PooledOutput::kAllToAll:
      EMBSCALE_EXPECTS(plan_.owner_slots.size() == static_cast<std::size_t>(ranks_), "one slot list per rank");
      for (int o = 0; o < ranks_; ++o) {
        slot_index_.push_back(index_table(plan_.owner_slots[static_cast<std::size_t>(o)]));
        const auto owned = static_cast<std::int64_t>(plan_.owner_slots[static_cast<std::size_t>(o)].size());
        for (int r = 0; r < rank_; ++r) base_[static_cast<std::size_t>(o)] += samples(r) * owned;
      }
      out_.resize(static_cast<std::size_t>(spec_.global_batch) * plan_.owner_slots[static_cast<std::size_t>(rank_)].size() * width_);
      // One owner of every slot, in order, with every column (one rank, or every table placed on
      // one rank): the received blocks are [sample][slot][dim], the pooled output's own layout.
      for (int o = 0; o < ranks_; ++o) {
        const auto& owned = plan_.owner_slots[static_cast<std::size_t>(o)];
        if (static_cast<std::int32_t>(owned.size()) == S && std::is_sorted(owned.begin(), owned.end()) &&
            plan_.column_count[static_cast<std::size_t>(o)] == spec_.dim())
          received_in_bag_order_ = true;  // then it owns every slot and column: no other owner has any
      }
      break;
    case PooledOutput::kNodeThenCross: {
      const int rpn = plan_.ranks_per_node, nodes = ranks_ / rpn;
      EMBSCALE_EXPECTS(rpn >= 1 && ranks_ % rpn == 0 && plan_.owner_slots.size() == static_cast<std::size_t>(nodes),
                       "one slot list per node, ranks a multiple of ranks_per_node");
      node_comm_ = comm_.split(rank_ / rpn, rank_ % rpn);
      cross_comm_ = comm_.split(rank_ % rpn, rank_ / rpn);
      // A node's buffer orders requesters by (local index, node): the reduce-scatter over the
      // node's ranks then gives local rank l the bags of every node's rank l, ready for the
      // cross-node alltoallv among the ranks of index l.
      for (int n = 0; n < nodes; ++n) {
        slot_index_.push_back(index_table(plan_.owner_slots[static_cast<std::size_t>(n)]));
        const auto owned = static_cast<std::int64_t>(plan_.owner_slots[static_cast<std::size_t>(n)].size());
        std::int64_t base = 0;
        for (int l = 0; l < rpn; ++l)
          for (int m = 0; m < nodes; ++m) {
            if (m * rpn + l == rank_)
              for (int o = n * rpn; o < (n + 1) * rpn; ++o) base_[static_cast<std::size_t>(o)] = base;
            base += samples(m * rpn + l) * owned;
          }
      }
      out_.resize(static_cast<std::size_t>(spec_.global_batch) *
                  plan_.owner_slots[static_cast<std::size_t>(rank_ / rpn)].size() * width_);
      break;
    }
  }
  // On one rank the reduce-scatter's buffer is the global batch's bags in sample order, and a
  // received_in_bag_order_ alltoallv's is [sample][slot][dim]: both the pooled output's layout.
  output_is_pooled_ = ranks_ == 1 && (plan_.output == PooledOutput::kReduceScatter || received_in_bag_order_);
}

std::vector<const comm::Communicator*> PooledExchange::communicators() const {
  std::vector<const comm::Communicator*> comms = {&comm_};
  if (node_comm_) comms.push_back(node_comm_.get());
  if (cross_comm_) comms.push_back(cross_comm_.get());
  return comms;
}

std::int64_t PooledExchange::position(int dest, std::int64_t sample, std::int32_t slot) const noexcept {
  const std::size_t group = plan_.output == PooledOutput::kReduceScatter ? 0
                            : plan_.output == PooledOutput::kAllToAll    ? static_cast<std::size_t>(dest)
                                                                         : static_cast<std::size_t>(dest / plan_.ranks_per_node);
  const auto owned = static_cast<std::int64_t>(plan_.owner_slots[group].size());
  return base_[static_cast<std::size_t>(dest)] + sample * owned + slot_index_[group][static_cast<std::size_t>(slot)];
}

void PooledExchange::prepare_step(const Batch& batch) {
  EMBSCALE_EXPECTS(batch.num_samples == sample_share_of(spec_.global_batch, rank_, ranks_).count &&
                       batch.num_slots == spec_.slots(),
                   "a rank's batch is its share of the global batch, with the layer's slots");
}

void PooledExchange::exchange_and_pool(std::span<float> pooled, StepRecorder& recorder) {
  if (ranks_ > 1) {
    recv_counts_.assign(send_counts_.size(), 0);
    comm_.alltoall(std::span<const std::size_t>(send_counts_), std::span<std::size_t>(recv_counts_), 1);
    recv_pairs_.resize(total(recv_counts_));
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
    router_.route(std::span<const Key>(recv_keys_), 1, [](Key) { return 0; }, distinct_);
    row_addresses_.resize(distinct_.send_keys.size());
  }
  const bool in_place = per_pair || store_.row_pointers(distinct_.send_keys, row_addresses_);
  if (!in_place) {
    rows_.resize(distinct_.send_keys.size() * width_);
    store_.read(distinct_.send_keys, rows_);
  }
  recorder.lap("lookup");

  const std::span<const float* const> addresses(row_addresses_);
  const std::span<float> sums = output_is_pooled_ ? pooled : std::span<float>(out_);
  if (per_pair)
    pool_pairs(recv_positions_, addresses, width_, sums, spec_.threads);
  else if (in_place)
    pool_pairs(recv_positions_, distinct_.inverse, addresses, width_, sums, spec_.threads);
  else
    pool_pairs(recv_positions_, distinct_.inverse, std::span<const float>(rows_), width_, sums, spec_.threads);
  recorder.lap("pool");
  recorder.count("pairs_sent", static_cast<std::int64_t>(send_pairs_.size()));
  recorder.count("pairs_received", static_cast<std::int64_t>(received.size()));
  recorder.count("lookups", static_cast<std::int64_t>(per_pair ? recv_keys_.size() : distinct_.send_keys.size()));
}

void PooledExchange::output_forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) {
  const auto dim = static_cast<std::size_t>(spec_.dim());
  const auto S = static_cast<std::size_t>(spec_.slots());
  const auto samples = [&](int r) { return static_cast<std::size_t>(sample_share_of(spec_.global_batch, r, ranks_).count); };
  const std::size_t mine = samples(rank_);
  // Copies the block of each owner group (slots `owned`, columns [first, first + count)) into
  // pooled, from `staging` laid out [group][sample][owned slot][count].
  const auto unpack = [&](const std::vector<std::vector<std::int32_t>>& groups, const auto& columns) {
    std::size_t at = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto [first, count] = columns(g);
      for (std::size_t s = 0; s < mine; ++s)
        for (const auto slot : groups[g]) {
          std::copy_n(staging_.data() + at, count, pooled.data() + (s * S + static_cast<std::size_t>(slot)) * dim + first);
          at += count;
        }
    }
  };
  switch (plan_.output) {
    case PooledOutput::kReduceScatter: {
      if (output_is_pooled_) {  // one rank: pooled holds the sums already
        recorder.lap("reduce_scatter");
        break;
      }
      std::vector<std::size_t> counts(static_cast<std::size_t>(ranks_));
      for (int r = 0; r < ranks_; ++r) counts[static_cast<std::size_t>(r)] = samples(r) * S * dim;
      comm_.reduce_scatter(std::span<const float>(out_), pooled, std::span<const std::size_t>(counts), comm::ReduceOp::kSum);
      recorder.lap("reduce_scatter");
      break;
    }
    case PooledOutput::kAllToAll: {
      std::vector<std::size_t> send(static_cast<std::size_t>(ranks_)), recv(send.size());
      const std::size_t owned = plan_.owner_slots[static_cast<std::size_t>(rank_)].size();
      for (int r = 0; r < ranks_; ++r) {
        send[static_cast<std::size_t>(r)] = samples(r) * owned * width_;
        recv[static_cast<std::size_t>(r)] = mine * plan_.owner_slots[static_cast<std::size_t>(r)].size() *
                                            static_cast<std::size_t>(plan_.column_count[static_cast<std::size_t>(r)]);
      }
      if (output_is_pooled_) {  // one rank: pooled holds the sums already
        recorder.lap("exchange_pooled");
        break;
      }
      if (received_in_bag_order_) {  // staging's layout is pooled's: receive there, nothing to unpack
        comm_.alltoallv(std::span<const float>(out_), std::span<const std::size_t>(send), pooled,
                        std::span<const std::size_t>(recv));
        recorder.lap("exchange_pooled");
        break;
      }
      staging_.resize(total(recv));
      comm_.alltoallv(std::span<const float>(out_), std::span<const std::size_t>(send), std::span<float>(staging_),
                      std::span<const std::size_t>(recv));
      recorder.lap("exchange_pooled");
      unpack(plan_.owner_slots, [&](std::size_t g) {
        return std::pair<std::size_t, std::size_t>(static_cast<std::size_t>(plan_.column_first[g]),
                                                   static_cast<std::size_t>(plan_.column_count[g]));
      });
      break;
    }
    case PooledOutput::kNodeThenCross: {
      const int rpn = plan_.ranks_per_node, nodes = ranks_ / rpn, node = rank_ / rpn, local = rank_ % rpn;
      const std::size_t owned = plan_.owner_slots[static_cast<std::size_t>(node)].size();
      std::vector<std::size_t> chunk(static_cast<std::size_t>(rpn), 0), send(static_cast<std::size_t>(nodes)),
          recv(static_cast<std::size_t>(nodes));
      for (int l = 0; l < rpn; ++l)
        for (int m = 0; m < nodes; ++m) chunk[static_cast<std::size_t>(l)] += samples(m * rpn + l) * owned * dim;
      grads_.resize(chunk[static_cast<std::size_t>(local)]);  // scratch: this rank's reduced chunk
      node_comm_->reduce_scatter(std::span<const float>(out_), std::span<float>(grads_),
                                 std::span<const std::size_t>(chunk), comm::ReduceOp::kSum);
      recorder.lap("reduce_scatter_node");
      for (int m = 0; m < nodes; ++m) {
        send[static_cast<std::size_t>(m)] = samples(m * rpn + local) * owned * dim;
        recv[static_cast<std::size_t>(m)] = mine * plan_.owner_slots[static_cast<std::size_t>(m)].size() * dim;
      }
      staging_.resize(total(recv));
      cross_comm_->alltoallv(std::span<const float>(grads_), std::span<const std::size_t>(send),
                             std::span<float>(staging_), std::span<const std::size_t>(recv));
      recorder.lap("exchange_pooled");
      unpack(plan_.owner_slots, [&](std::size_t) { return std::pair<std::size_t, std::size_t>(0, dim); });
      break;
    }
  }
  if (spec_.mean()) divide_by_bag_size(batch, dim, pooled);
  recorder.lap("unpack");
}

void PooledExchange::backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                              StepRecorder& recorder) {
  const auto dim = static_cast<std::size_t>(spec_.dim());
  const auto S = static_cast<std::size_t>(spec_.slots());
  const auto samples = [&](int r) { return static_cast<std::size_t>(sample_share_of(spec_.global_batch, r, ranks_).count); };
  const std::size_t mine = samples(rank_);
  std::span<const float> grad = grad_pooled;
  if (spec_.mean()) {  // divided in a copy: grad_pooled is the caller's
    grad_pooled_.assign(grad_pooled.begin(), grad_pooled.end());
    divide_by_bag_size(batch, dim, grad_pooled_);
    grad = grad_pooled_;
  }
  // The gradients of the owner's pooled sums (out_'s layout): where they arrive, or on one rank
  // where output_is_pooled_, grad itself.
  std::span<const float> sums_grad = out_;
  // Packs `grad` per owner group into staging (the unpack's layout).
  const auto pack = [&](const std::vector<std::vector<std::int32_t>>& groups, const auto& columns) {
    staging_.clear();
    for (std::size_t g = 0; g < groups.size(); ++g) {
      const auto [first, count] = columns(g);
      for (std::size_t s = 0; s < mine; ++s)
        for (const auto slot : groups[g]) {
          const float* from = grad.data() + (s * S + static_cast<std::size_t>(slot)) * dim + first;
          staging_.insert(staging_.end(), from, from + count);
        }
    }
  };
  switch (plan_.output) {
    case PooledOutput::kReduceScatter: {
      recorder.lap("pack_grads");  // the all-gather takes the (mean: divided) gradients as they are
      if (output_is_pooled_) {
        sums_grad = grad;
        recorder.lap("all_gather");
        break;
      }
      std::vector<std::size_t> counts(static_cast<std::size_t>(ranks_));
      for (int r = 0; r < ranks_; ++r) counts[static_cast<std::size_t>(r)] = samples(r) * S * dim;
      comm_.allgatherv(grad, std::span<float>(out_), std::span<const std::size_t>(counts));
      recorder.lap("all_gather");
      break;
    }
    case PooledOutput::kAllToAll: {
      if (output_is_pooled_) {
        sums_grad = grad;
        recorder.lap("pack_grads");
        recorder.lap("exchange_grads");
        break;
      }
      pack(plan_.owner_slots, [&](std::size_t g) {
        return std::pair<std::size_t, std::size_t>(static_cast<std::size_t>(plan_.column_first[g]),
                                                   static_cast<std::size_t>(plan_.column_count[g]));
      });
      recorder.lap("pack_grads");
      std::vector<std::size_t> send(static_cast<std::size_t>(ranks_)), recv(send.size());
      const std::size_t owned = plan_.owner_slots[static_cast<std::size_t>(rank_)].size();
      for (int r = 0; r < ranks_; ++r) {
        recv[static_cast<std::size_t>(r)] = samples(r) * owned * width_;
        send[static_cast<std::size_t>(r)] = mine * plan_.owner_slots[static_cast<std::size_t>(r)].size() *
                                            static_cast<std::size_t>(plan_.column_count[static_cast<std::size_t>(r)]);
      }
      comm_.alltoallv(std::span<const float>(staging_), std::span<const std::size_t>(send), std::span<float>(out_),
                      std::span<const std::size_t>(recv));
      recorder.lap("exchange_grads");
      break;
    }
    case PooledOutput::kNodeThenCross: {
      const int rpn = plan_.ranks_per_node, nodes = ranks_ / rpn, node = rank_ / rpn, local = rank_ % rpn;
      const std::size_t owned = plan_.owner_slots[static_cast<std::size_t>(node)].size();
      pack(plan_.owner_slots, [&](std::size_t) { return std::pair<std::size_t, std::size_t>(0, dim); });
      recorder.lap("pack_grads");
      std::vector<std::size_t> chunk(static_cast<std::size_t>(rpn), 0), send(static_cast<std::size_t>(nodes)),
          recv(static_cast<std::size_t>(nodes));
      for (int l = 0; l < rpn; ++l)
        for (int m = 0; m < nodes; ++m) chunk[static_cast<std::size_t>(l)] += samples(m * rpn + l) * owned * dim;
      for (int m = 0; m < nodes; ++m) {
        recv[static_cast<std::size_t>(m)] = samples(m * rpn + local) * owned * dim;
        send[static_cast<std::size_t>(m)] = mine * plan_.owner_slots[static_cast<std::size_t>(m)].size() * dim;
      }
      grads_.resize(chunk[static_cast<std::size_t>(local)]);
      cross_comm_->alltoallv(std::span<const float>(staging_), std::span<const std::size_t>(send),
                             std::span<float>(grads_), std::span<const std::size_t>(recv));
      recorder.lap("exchange_grads");
      node_comm_->allgatherv(std::span<const float>(grads_), std::span<float>(out_), std::span<const std::size_t>(chunk));
      recorder.lap("all_gather_node");
      break;
    }
  }
  grads_.resize(distinct_.send_keys.size() * width_);
  unpool_pairs(recv_positions_, distinct_.inverse, sums_grad, width_, grads_, spec_.threads);
  recorder.lap("pool_backward");
  store_.apply(distinct_.send_keys, grads_, *spec_.optimizer, step);
  recorder.lap("update");
}

}  // namespace embscale::embedding
