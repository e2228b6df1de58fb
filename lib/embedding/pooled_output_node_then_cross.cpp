// PooledOutput::kNodeThenCross (table-row-wise): the ranks of a node hold partial sums of the bags
// of the node's tables; a reduce-scatter within the node gives local rank l the sums of the bags
// of every node's rank l, then an alltoallv among the ranks of local index l (one per node) sends
// each its bags. Backward: the alltoallv the other way, then an all-gather within the node.
#include "core/error.hpp"
#include "embedding/pooled_output.hpp"

namespace embscale::embedding {
namespace {

class NodeThenCrossOutput final : public PooledOutputExchange {
 public:
  NodeThenCrossOutput(const LayerSpec& spec, PooledPlan plan, std::size_t width)
      : PooledOutputExchange(spec, std::move(plan)) {
    const int rpn = plan_.ranks_per_node, nodes = ranks_ / rpn;
    EMBSCALE_EXPECTS(rpn >= 1 && ranks_ % rpn == 0 && plan_.owner_slots.size() == static_cast<std::size_t>(nodes),
                     "one slot list per node, ranks a multiple of ranks_per_node");
    const int node = rank_ / rpn, local = rank_ % rpn;
    node_comm_ = comm_.split(node, local);
    cross_comm_ = comm_.split(local, node);
    index_groups();
    // A node's buffer orders requesters by (local index, node): the reduce-scatter over the
    // node's ranks then gives local rank l the bags of every node's rank l, ready for the
    // cross-node alltoallv among the ranks of index l.
    for (int n = 0; n < nodes; ++n) {
      std::int64_t base = 0;
      for (int l = 0; l < rpn; ++l)
        for (int m = 0; m < nodes; ++m) {
          if (m * rpn + l == rank_)
            for (int o = n * rpn; o < (n + 1) * rpn; ++o) base_[static_cast<std::size_t>(o)] = base;
          base += static_cast<std::int64_t>(samples_of(m * rpn + l)) * owned_[static_cast<std::size_t>(n)];
        }
      for (int o = n * rpn; o < (n + 1) * rpn; ++o)
        group_of_dest_[static_cast<std::size_t>(o)] = static_cast<std::size_t>(n);
    }
    const std::size_t owned = plan_.owner_slots[static_cast<std::size_t>(node)].size();
    owner_buffer_size_ = static_cast<std::size_t>(spec.global_batch) * owned * width;
    chunk_counts_.assign(static_cast<std::size_t>(rpn), 0);
    for (int l = 0; l < rpn; ++l)
      for (int m = 0; m < nodes; ++m)
        chunk_counts_[static_cast<std::size_t>(l)] += samples_of(m * rpn + l) * owned * dim_;
    chunk_floats_ = chunk_counts_[static_cast<std::size_t>(local)];
    chunk_to_node_.resize(static_cast<std::size_t>(nodes));
    node_to_requester_.resize(static_cast<std::size_t>(nodes));
    for (int m = 0; m < nodes; ++m) {
      chunk_to_node_[static_cast<std::size_t>(m)] = samples_of(m * rpn + local) * owned * dim_;
      node_to_requester_[static_cast<std::size_t>(m)] =
          mine_ * plan_.owner_slots[static_cast<std::size_t>(m)].size() * dim_;
    }
    index_blocks([this](std::size_t g) { return every_column(g); });
  }

  std::vector<const comm::Communicator*> communicators() const override {
    return {&comm_, node_comm_.get(), cross_comm_.get()};
  }

  void forward(std::span<const float> sums, std::span<float> pooled, StepRecorder& recorder) override {
    const std::span<float> chunk = node_chunk();
    node_comm_->reduce_scatter(sums, chunk, std::span<const std::size_t>(chunk_counts_), comm::ReduceOp::kSum);
    recorder.lap("reduce_scatter_node");
    cross_comm_->alltoallv(std::span<const float>(chunk), std::span<const std::size_t>(chunk_to_node_), blocks(),
                           std::span<const std::size_t>(node_to_requester_));
    recorder.lap("exchange_pooled");
    unpack_blocks(pooled);
  }

  std::span<const float> backward(std::span<const float> grad, std::span<float> sums_grad,
                                  StepRecorder& recorder) override {
    const std::span<const float> packed = pack_blocks(grad);
    recorder.lap("pack_grads");
    const std::span<float> chunk = node_chunk();
    cross_comm_->alltoallv(packed, std::span<const std::size_t>(node_to_requester_), chunk,
                           std::span<const std::size_t>(chunk_to_node_));
    recorder.lap("exchange_grads");
    node_comm_->allgatherv(std::span<const float>(chunk), sums_grad, std::span<const std::size_t>(chunk_counts_));
    recorder.lap("all_gather_node");
    return sums_grad;
  }

 private:
  // Every owner group pools every column.
  std::pair<std::size_t, std::size_t> every_column(std::size_t) const { return {0, dim_}; }
  // This rank's chunk of the node's reduced sums / their gradients, in the layer's memory.
  std::span<float> node_chunk() { return layer_buffer(node_chunk_, device_chunk_, chunk_floats_); }

  std::unique_ptr<comm::Communicator> node_comm_, cross_comm_;
  std::vector<std::size_t> chunk_counts_;       // per local rank: its chunk of the node's reduced sums
  std::vector<std::size_t> chunk_to_node_;      // per node: the floats of its rank (of my index)'s bags in my chunk
  std::vector<std::size_t> node_to_requester_;  // per node: the floats of my bags it pooled
  std::size_t chunk_floats_ = 0;
  std::vector<float> node_chunk_;                              // node_chunk() on the host
  std::unique_ptr<device::GrowingDeviceBuffer> device_chunk_;  // node_chunk() on a device
};

}  // namespace

std::unique_ptr<PooledOutputExchange> make_node_then_cross_output(const LayerSpec& spec, PooledPlan plan,
                                                                  std::size_t width) {
  return std::make_unique<NodeThenCrossOutput>(spec, std::move(plan), width);
}

}  // namespace embscale::embedding
