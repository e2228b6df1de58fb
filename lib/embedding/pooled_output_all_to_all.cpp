// PooledOutput::kAllToAll: each owner pools whole bags of its slots (or its columns of every
// slot) for every requester; one alltoallv sends each requester its bags, and the backward one
// sends each owner the gradients of the bags it pooled.
#include <algorithm>

#include "core/error.hpp"
#include "embedding/pooled_output.hpp"

namespace embscale::embedding {
namespace {

class AllToAllOutput final : public PooledOutputExchange {
 public:
  AllToAllOutput(const LayerSpec& spec, PooledPlan plan, std::size_t width)
      : PooledOutputExchange(spec, std::move(plan)) {
    EMBSCALE_EXPECTS(plan_.owner_slots.size() == static_cast<std::size_t>(ranks_), "one slot list per rank");
    index_groups();
    for (int o = 0; o < ranks_; ++o) {
      group_of_dest_[static_cast<std::size_t>(o)] = static_cast<std::size_t>(o);
      for (int r = 0; r < rank_; ++r)
        base_[static_cast<std::size_t>(o)] +=
            static_cast<std::int64_t>(samples_of(r)) * owned_[static_cast<std::size_t>(o)];
    }
    const std::size_t owned = plan_.owner_slots[static_cast<std::size_t>(rank_)].size();
    owner_buffer_size_ = static_cast<std::size_t>(spec.global_batch) * owned * width;
    // One owner of every slot, in order, with every column (one rank, or every table placed on
    // one rank): the received blocks are [sample][slot][dim], the pooled output's own layout.
    for (int o = 0; o < ranks_; ++o) {
      const auto& slots = plan_.owner_slots[static_cast<std::size_t>(o)];
      if (slots.size() == slots_ && std::is_sorted(slots.begin(), slots.end()) &&
          plan_.column_count[static_cast<std::size_t>(o)] == spec.dim())
        received_in_bag_order_ = true;  // then it owns every slot and column: no other owner has any
    }
    owner_buffer_is_output_ = ranks_ == 1 && received_in_bag_order_;
    // Forward: this owner's bags of each requester out, each owner's blocks of this rank's bags
    // in; backward the same counts the other way.
    owner_counts_.resize(static_cast<std::size_t>(ranks_));
    requester_counts_.resize(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) {
      owner_counts_[static_cast<std::size_t>(r)] = samples_of(r) * owned * width;
      requester_counts_[static_cast<std::size_t>(r)] =
          mine_ * plan_.owner_slots[static_cast<std::size_t>(r)].size() *
          static_cast<std::size_t>(plan_.column_count[static_cast<std::size_t>(r)]);
    }
    if (!received_in_bag_order_) index_blocks([this](std::size_t g) { return columns_of(g); });
  }

  void forward(std::span<const float> sums, std::span<float> pooled, StepRecorder& recorder) override {
    if (owner_buffer_is_output_) {  // pooled holds the sums already
      recorder.lap("exchange_pooled");
      return;
    }
    if (received_in_bag_order_) {  // the blocks' layout is pooled's: receive there, nothing to unpack
      comm_.alltoallv(sums, std::span<const std::size_t>(owner_counts_), pooled,
                      std::span<const std::size_t>(requester_counts_));
      recorder.lap("exchange_pooled");
      return;
    }
    comm_.alltoallv(sums, std::span<const std::size_t>(owner_counts_), blocks(),
                    std::span<const std::size_t>(requester_counts_));
    recorder.lap("exchange_pooled");
    unpack_blocks(pooled);
  }

  std::span<const float> backward(std::span<const float> grad, std::span<float> sums_grad,
                                  StepRecorder& recorder) override {
    if (owner_buffer_is_output_) {
      recorder.lap("pack_grads");
      recorder.lap("exchange_grads");
      return grad;
    }
    const std::span<const float> packed = pack_blocks(grad);
    recorder.lap("pack_grads");
    comm_.alltoallv(packed, std::span<const std::size_t>(requester_counts_), sums_grad,
                    std::span<const std::size_t>(owner_counts_));
    recorder.lap("exchange_grads");
    return sums_grad;
  }

 private:
  // Owner group (rank) g's columns of the layer's dim: {first, count}.
  std::pair<std::size_t, std::size_t> columns_of(std::size_t g) const {
    return {static_cast<std::size_t>(plan_.column_first[g]), static_cast<std::size_t>(plan_.column_count[g])};
  }

  bool received_in_bag_order_ = false;
  std::vector<std::size_t> owner_counts_;      // per rank: the floats this owner pooled of its bags
  std::vector<std::size_t> requester_counts_;  // per rank: the floats of this rank's bags it pooled
};

}  // namespace

std::unique_ptr<PooledOutputExchange> make_all_to_all_output(const LayerSpec& spec, PooledPlan plan,
                                                             std::size_t width) {
  return std::make_unique<AllToAllOutput>(spec, std::move(plan), width);
}

}  // namespace embscale::embedding
