// The output half of PooledExchange (pooled_exchange.hpp): how the owners' pooled sums reach the
// requesters, one class per output layout (PooledOutput). Each says where a requester's bag lands
// in an owner's buffer (its placement), computes its collectives' counts once when it is made
// (they depend on the plan and the global batch, not on a step's keys), and runs the output's
// phases forward (owner sums -> the requesters' pooled output) and backward (pooled gradients ->
// the gradients of the owner's sums).
//
// Buffers, each with one meaning: the owner buffer (PooledExchange's: [bag in owner order][width]
// sums forward, their gradients backward: one layout, lifetimes that do not overlap), the
// requester blocks (a layout's own: what travels per owner group, [group][sample][owned
// slot][columns], received forward and packed backward) and, for the node-then-cross layout, the
// node chunk (this rank's share of its node's reduced sums).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "device/device_resources.hpp"
#include "embedding/portable/step_ref.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

enum class PooledOutput {
  // Every owner holds partial sums of every bag of the global batch; a reduce-scatter gives each
  // rank its own bags (an all-gather of the pooled gradients backward). HugeCTR's distributed
  // slot, TorchRec's row-wise.
  kReduceScatter,
  // An owner pools whole bags of its slots (or its columns of every slot); an alltoallv sends
  // each requester its bags. HugeCTR's localized slot, TorchRec's table- and column-wise.
  kAllToAll,
  // Table-row-wise: partial sums inside a node (reduce-scatter over the node's ranks), then an
  // alltoallv across nodes among the ranks of one local index.
  kNodeThenCross,
};

struct PooledPlan {
  PooledOutput output = PooledOutput::kReduceScatter;
  // kAllToAll and kNodeThenCross: the layer slots each owner (kAllToAll: rank; kNodeThenCross:
  // node) pools, ascending.
  std::vector<std::vector<std::int32_t>> owner_slots;
  // kAllToAll: each rank's columns [first, first + count) of the layer's dim (all of them but
  // for column-wise, where every rank owns a slice of every row and receives every key).
  std::vector<std::int32_t> column_first, column_count;
  bool every_rank_gets_every_key = false;
  int ranks_per_node = 1;  // kNodeThenCross
};

class PooledOutputExchange {
 public:
  virtual ~PooledOutputExchange() = default;

  // Where this rank's bag (sample, slot) lands in the owner buffer of rank `dest` (one of its
  // owners of that slot): the first of this rank's bags there, then sample-major over the slots
  // that owner pools.
  std::int64_t position(int dest, std::int64_t sample, std::int32_t slot) const noexcept {
    return portable::position_of(placement(), dest, sample, slot);
  }
  // The placement as plain data (host pointers into this object): what position() reads, and
  // what a device exchange uploads for its routing kernel.
  portable::PlacementRef placement() const noexcept {
    return {static_cast<std::int32_t>(slots_), group_of_dest_.data(), base_.data(), owned_.data(), slot_index_.data()};
  }
  std::size_t groups() const noexcept { return owned_.size(); }
  // Floats of this rank's owner buffer.
  std::size_t owner_buffer_size() const noexcept { return owner_buffer_size_; }
  // On one rank, an owner buffer laid out as the pooled output ([sample][slot][dim]): the owner
  // pools straight into the output and reads the gradients where they are; no copy, no call.
  bool owner_buffer_is_output() const noexcept { return owner_buffer_is_output_; }
  // The communicators its collectives run on (the layer's, and any it split).
  virtual std::vector<const comm::Communicator*> communicators() const { return {&comm_}; }

  // The sums of this owner's buffer to this rank's pooled output (sums only: the mean is the
  // caller's), recording the output's phases up to, not including, "unpack".
  virtual void forward(std::span<const float> sums, std::span<float> pooled, StepRecorder& recorder) = 0;
  // This rank's pooled gradients (mean: divided) to the gradients of its owner buffer's sums,
  // recording "pack_grads" and the output's backward collectives. Returns them: `sums_grad`
  // (owner_buffer_size() floats), or `grad` itself where owner_buffer_is_output().
  virtual std::span<const float> backward(std::span<const float> grad, std::span<float> sums_grad,
                                          StepRecorder& recorder) = 0;

 protected:
  PooledOutputExchange(const LayerSpec& spec, PooledPlan plan);

  std::size_t samples_of(int rank) const noexcept;
  // Indexes the owner groups: per group its slot -> index table (from plan_.owner_slots).
  void index_groups();
  // Requester blocks <-> pooled output: the block of each owner group (its slots, the columns
  // columns(g) = {first, count}) for this rank's samples, in [group][sample][slot][count] order,
  // as copy segments computed once here (on a device layer, uploaded).
  template <class Columns> void index_blocks(const Columns& columns);
  // The requester blocks (block_floats_ floats, in the layer's memory).
  std::span<float> blocks() { return layer_buffer(blocks_, device_blocks_, block_floats_); }
  // blocks() into `pooled` (unpack); `grad` into blocks(), returned (pack).
  void unpack_blocks(std::span<float> pooled);
  std::span<const float> pack_blocks(std::span<const float> grad);
  // `n` floats in the layer's memory: `host` resized, or on a device layer `device`'s.
  std::span<float> layer_buffer(std::vector<float>& host, std::unique_ptr<device::GrowingDeviceBuffer>& device,
                                std::size_t n);

  std::int64_t global_batch_;
  PooledPlan plan_;
  comm::Communicator& comm_;
  int rank_, ranks_;
  std::size_t dim_, slots_, mine_;  // the layer's dim and slots, this rank's samples
  // The placement position() reads: per destination rank its owner group and the first of this
  // rank's bags there; per group the slots it pools (count, and index of each layer slot or -1).
  std::vector<std::uint64_t> group_of_dest_;
  std::vector<std::int64_t> base_;
  std::vector<std::int64_t> owned_;
  std::vector<std::int32_t> slot_index_;  // [group][layer slot]
  std::size_t owner_buffer_size_ = 0;
  bool owner_buffer_is_output_ = false;

 private:
  // The copies between the requester blocks and the pooled output (index_blocks).
  void upload_segments();
  std::vector<std::uint64_t> segments_;  // [segment]{block offset, pooled offset, floats}
  std::size_t block_floats_ = 0;
  std::vector<float> blocks_;  // on the host
  // A device layer's: its library, the embedding_step family, the stream, the device buffers.
  const device::DeviceLibrary* library_ = nullptr;
  const device::DeviceFunctions* step_ = nullptr;
  void* stream_ = nullptr;
  std::unique_ptr<device::GrowingDeviceBuffer> device_blocks_, device_segments_;
};

// `width`: the columns this rank stores (the owner buffer's row width).
std::unique_ptr<PooledOutputExchange> make_reduce_scatter_output(const LayerSpec& spec, PooledPlan plan,
                                                                 std::size_t width);
std::unique_ptr<PooledOutputExchange> make_all_to_all_output(const LayerSpec& spec, PooledPlan plan, std::size_t width);
std::unique_ptr<PooledOutputExchange> make_node_then_cross_output(const LayerSpec& spec, PooledPlan plan,
                                                                  std::size_t width);
// The plan's output.
std::unique_ptr<PooledOutputExchange> make_pooled_output(const LayerSpec& spec, PooledPlan plan, std::size_t width);

// ---- implementation of the template ----

template <class Columns> void PooledOutputExchange::index_blocks(const Columns& columns) {
  segments_.clear();
  std::uint64_t at = 0;
  for (std::size_t g = 0; g < plan_.owner_slots.size(); ++g) {
    const auto [first, count] = columns(g);
    for (std::size_t s = 0; s < mine_; ++s)
      for (const auto slot : plan_.owner_slots[g]) {
        segments_.insert(segments_.end(), {at, (s * slots_ + static_cast<std::size_t>(slot)) * dim_ + first, count});
        at += count;
      }
  }
  block_floats_ = at;
  upload_segments();
}

}  // namespace embscale::embedding
