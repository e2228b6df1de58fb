// PooledOutput::kReduceScatter: every owner's buffer holds partial sums of every bag of the global
// batch, in sample order; a reduce-scatter gives each rank the sums of its own bags, and the
// backward all-gather gives every owner the gradients of all bags.
#include <algorithm>

#include "core/batch_source.hpp"
#include "embedding/pooled_output.hpp"

namespace embscale::embedding {
namespace {

class ReduceScatterOutput final : public PooledOutputExchange {
 public:
  ReduceScatterOutput(const LayerSpec& spec, PooledPlan plan, std::size_t width)
      : PooledOutputExchange(spec, std::move(plan)) {
    // One group: the global batch's bags in sample order.
    plan_.owner_slots.assign(1, {});
    for (std::int32_t s = 0; s < spec.slots(); ++s) plan_.owner_slots[0].push_back(s);
    index_groups();
    std::fill(base_.begin(), base_.end(), sample_share_of(spec.global_batch, rank_, ranks_).first * spec.slots());
    owner_buffer_size_ = static_cast<std::size_t>(spec.global_batch) * slots_ * width;
    owner_buffer_is_output_ = ranks_ == 1;  // the global batch's bags in sample order: the output's layout
    counts_.resize(static_cast<std::size_t>(ranks_));
    for (int r = 0; r < ranks_; ++r) counts_[static_cast<std::size_t>(r)] = samples_of(r) * slots_ * dim_;
  }

  void forward(std::span<const float> sums, std::span<float> pooled, StepRecorder& recorder) override {
    if (!owner_buffer_is_output_)  // else pooled holds the sums already
      comm_.reduce_scatter(sums, pooled, std::span<const std::size_t>(counts_), comm::ReduceOp::kSum);
    recorder.lap("reduce_scatter");
  }

  std::span<const float> backward(std::span<const float> grad, std::span<float> sums_grad,
                                  StepRecorder& recorder) override {
    recorder.lap("pack_grads");  // the all-gather takes the (mean: divided) gradients as they are
    if (owner_buffer_is_output_) {
      recorder.lap("all_gather");
      return grad;
    }
    comm_.allgatherv(grad, sums_grad, std::span<const std::size_t>(counts_));
    recorder.lap("all_gather");
    return sums_grad;
  }

 private:
  std::vector<std::size_t> counts_;  // per rank: the floats of its bags (reduce-scatter and all-gather)
};

}  // namespace

std::unique_ptr<PooledOutputExchange> make_reduce_scatter_output(const LayerSpec& spec, PooledPlan plan,
                                                                 std::size_t width) {
  return std::make_unique<ReduceScatterOutput>(spec, std::move(plan), width);
}

}  // namespace embscale::embedding
