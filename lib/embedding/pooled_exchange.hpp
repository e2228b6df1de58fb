// PooledExchange: the data flow of every scheme that pools on the owners (HugeCTR's distributed
// and localized slots, TorchRec's table-, row-, column- and table-row-wise shardings). Keys
// travel with the position of their bag; owners look up and pool; pooled vectors travel back.
//
// Forward, on every rank:
//   route            each key occurrence of this rank's bags -> its owner(s), with the position
//                    its bag has in the owner's output buffer
//   exchange_keys    alltoall of counts, alltoallv of (key, position) pairs
//   lookup           the owner de-duplicates the keys it received and reads their rows
//   pool             out[position] += row, per pair (partial or whole bags, per the output)
//   <output>         the pooled vectors back to the requesters (PooledOutput), then the mean
// On one rank every exchange is the identity: the routed pairs are the received ones and, where
// the owner's output buffer has the pooled output's layout, the owner pools straight into it;
// no collective is called and no buffer copied (the phases still appear, at no cost).
// Backward mirrors it: the pooled gradients go to the owners (the output's reverse), each
// distinct key's gradient is summed over its pairs (pool_backward), the optimizer updates.
// The owner always sums; the requester applies the mean combiner (forward: after the output;
// backward: before sending), so an owner never needs a bag's size.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "core/huge_page_allocator.hpp"
#include "embedding/key_router.hpp"
#include "embedding/pooled_output.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

// Phase lists of the three outputs (each scheme returns one as its phases()).
std::span<const PhaseDefinition> pooled_phases(PooledOutput output) noexcept;

class PooledExchange {
 public:
  // `store` holds this rank's rows (width: its column count). kNodeThenCross splits the layer's
  // communicator into nodes and across them.
  PooledExchange(const LayerSpec& spec, PooledPlan plan, RowStore& store);

  std::vector<const comm::Communicator*> communicators() const;

  // owner(key, layer_slot) -> rank; ignored when every rank gets every key.
  template <class Owner>
  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder, const Owner& owner);
  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step, StepRecorder& recorder);
  // backward without the update: the gradient of each distinct key this rank owns, through
  // "pool_backward"; the keys are gradient_keys(), the gradients the span returned (keys x width),
  // both valid until the next forward. For a scheme that applies them with rows of its own in one
  // update (hot_replicated: a store's update runs once a step, the Global type touching every row).
  std::span<const float> gradients(const Batch& batch, std::span<const float> grad_pooled, StepRecorder& recorder);
  std::span<const Key> gradient_keys() const noexcept { return distinct_.send_keys; }

 private:
  struct KeyPosition {
    Key key;
    std::int64_t position;
  };
  void prepare_step(const Batch& batch);
  void exchange_and_pool(std::span<float> pooled, StepRecorder& recorder);
  void output_forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder);

  LayerSpec spec_;
  bool every_rank_gets_every_key_;
  RowStore& store_;
  comm::Communicator& comm_;
  int rank_, ranks_;
  std::size_t width_;                             // this rank's stored columns
  std::unique_ptr<PooledOutputExchange> output_;  // the plan's output layout: placement and collectives
  // Per step: each key occurrence's owner, and the buffers carried from forward to backward.
  std::vector<int> occurrence_dest_;
  std::vector<std::size_t> send_counts_, recv_counts_;
  std::vector<KeyPosition> send_pairs_, recv_pairs_;
  std::vector<Key> recv_keys_;
  std::vector<std::int64_t> recv_positions_;
  KeyRouter router_;
  RoutedKeys distinct_;  // the received keys, de-duplicated (one group; training, or rows not in place)
  std::vector<const float*> row_addresses_;  // rows in the store, where it can say: per distinct key, or per pair
  // The two buffers of a row per distinct key (tens of MiB at a large batch, read at random: in
  // key order by the pool, in row order by the update) on 2 MiB pages where the kernel gives them.
  HugePageVector<float> rows_;  // distinct keys' rows, copied, where the store cannot say
  // The owner buffer ([bag in owner order][width]): this owner's pooled sums forward, their
  // gradients backward (pooled_output.hpp).
  std::vector<float> owner_buffer_;
  HugePageVector<float> grads_;     // distinct keys' gradients
  std::vector<float> grad_pooled_;  // backward, mean only: this rank's pooled gradients, divided
};

// ---- implementation of the template ----

template <class Owner>
void PooledExchange::forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder, const Owner& owner) {
  prepare_step(batch);
  const auto slots = batch.num_slots;
  send_counts_.assign(static_cast<std::size_t>(ranks_), 0);
  // Each key to every rank (column-wise; on one rank, the only owner there is): no owner to find.
  const bool to_every_rank = every_rank_gets_every_key_ || ranks_ == 1;
  if (!to_every_rank) {
    occurrence_dest_.resize(batch.keys.size());
    for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
      const auto slot = static_cast<std::int32_t>(b % slots);
      for (auto k = batch.offsets[static_cast<std::size_t>(b)]; k < batch.offsets[static_cast<std::size_t>(b) + 1];
           ++k) {
        const int dest = owner(batch.keys[static_cast<std::size_t>(k)], slot);
        occurrence_dest_[static_cast<std::size_t>(k)] = dest;
        ++send_counts_[static_cast<std::size_t>(dest)];
      }
    }
  } else {
    for (auto& c : send_counts_) c = batch.keys.size();
  }
  std::vector<std::size_t> next(send_counts_.size(), 0);
  for (std::size_t r = 1; r < next.size(); ++r) next[r] = next[r - 1] + send_counts_[r - 1];
  send_pairs_.resize(next.back() + send_counts_.back());
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const std::int64_t sample = b / slots;
    const auto slot = static_cast<std::int32_t>(b % slots);
    const auto first = static_cast<std::size_t>(batch.offsets[static_cast<std::size_t>(b)]),
               last = static_cast<std::size_t>(batch.offsets[static_cast<std::size_t>(b) + 1]);
    if (to_every_rank) {  // the bag's keys to every rank, at its place there
      for (int dest = 0; dest < ranks_; ++dest) {
        const std::int64_t at = output_->position(dest, sample, slot);
        for (std::size_t k = first; k < last; ++k)
          send_pairs_[next[static_cast<std::size_t>(dest)]++] = {batch.keys[k], at};
      }
      continue;
    }
    int last_dest = -1;  // the bag's position at last_dest (a bag's keys mostly share an owner)
    std::int64_t last_position = 0;
    for (std::size_t k = first; k < last; ++k) {
      const int dest = occurrence_dest_[k];
      if (dest != last_dest) last_position = output_->position(last_dest = dest, sample, slot);
      send_pairs_[next[static_cast<std::size_t>(dest)]++] = {batch.keys[k], last_position};
    }
  }
  recorder.lap("route");
  exchange_and_pool(pooled, recorder);
  output_forward(batch, pooled, recorder);
}

}  // namespace embscale::embedding
