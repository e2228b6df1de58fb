// PooledScheme: a scheme that pools on the owners (PooledExchange) is its placement, nothing
// more: the plan (which output, which slots and columns each owner pools), the rows this rank
// owns, and the owner of a key. Each such scheme's file builds those three and returns one of
// these (schemes/*.cpp).
#pragma once

#include <memory>
#include <utility>

#include "embedding/device_pooled_exchange.hpp"
#include "embedding/owner_rule.hpp"
#include "embedding/pooled_exchange.hpp"
#include "embedding/scheme.hpp"

namespace embscale::embedding {

class PooledScheme final : public EmbeddingScheme {
 public:
  // `optimizer`: the scheme's own when its stored rows are narrower than the layer's (a column
  // shard: the optimizer's state is per stored column); null: the layer's. A device layer
  // (spec.context) runs the device exchange, a host layer the host's.
  PooledScheme(const LayerSpec& spec, PooledPlan plan, std::unique_ptr<RowStore> store, OwnerRule owner,
               std::unique_ptr<SparseOptimizer> optimizer = nullptr)
      : output_(plan.output), optimizer_(std::move(optimizer)), store_(std::move(store)), owner_(std::move(owner)) {
    const LayerSpec layer = with_optimizer(spec, optimizer_.get());
    if (spec.context.on_host()) host_ = std::make_unique<PooledExchange>(layer, std::move(plan), *store_);
    else device_ = std::make_unique<DevicePooledExchange>(layer, std::move(plan), *store_, owner_);
  }

  std::span<const PhaseDefinition> phases() const noexcept override { return pooled_phases(output_); }
  std::vector<const comm::Communicator*> communicators() const override {
    return host_ ? host_->communicators() : device_->communicators();
  }

  void forward(const Batch& batch, std::span<float> pooled, StepRecorder& recorder) override {
    if (host_) host_->forward(batch, pooled, recorder, owner_);
    else device_->forward(batch, pooled, recorder);
    recorder.count("keys", static_cast<std::int64_t>(batch.keys.size()));
  }
  void backward(const Batch& batch, std::span<const float> grad_pooled, std::int64_t step,
                StepRecorder& recorder) override {
    if (host_) host_->backward(batch, grad_pooled, step, recorder);
    else device_->backward(batch, grad_pooled, step, recorder);
  }

  const RowStore& store() const override { return *store_; }
  RowStore& store() override { return *store_; }

 private:
  static LayerSpec with_optimizer(LayerSpec spec, const SparseOptimizer* own) {
    if (own) spec.optimizer = own;
    return spec;
  }

  PooledOutput output_;
  std::unique_ptr<SparseOptimizer> optimizer_;
  std::unique_ptr<RowStore> store_;
  OwnerRule owner_;
  std::unique_ptr<PooledExchange> host_;          // on the host
  std::unique_ptr<DevicePooledExchange> device_;  // on a device
};

inline std::unique_ptr<EmbeddingScheme> make_pooled_scheme(const LayerSpec& spec, PooledPlan plan,
                                                           std::unique_ptr<RowStore> store, OwnerRule owner,
                                                           std::unique_ptr<SparseOptimizer> optimizer = nullptr) {
  return std::make_unique<PooledScheme>(spec, std::move(plan), std::move(store), std::move(owner),
                                        std::move(optimizer));
}

// Blocks of contiguous rows: slot s of the layer split into `parts` blocks of
// ceil(size / parts) rows (TorchRec's row-wise), the last ones shorter or empty.
struct RowBlocks {
  std::vector<Key> offsets;         // first key of each layer slot
  std::vector<std::int64_t> block;  // rows per block of each layer slot

  RowBlocks(const LayerSpec& spec, int parts);
  int block_of(Key key, std::int32_t slot) const noexcept {
    return portable::owner_row_block(key, offsets[static_cast<std::size_t>(slot)],
                                     block[static_cast<std::size_t>(slot)]);
  }
  // Adds to `owned` the keys of block `part` of `slot`.
  void add_block(OwnedKeys& owned, const LayerSpec& spec, std::int32_t slot, int part) const;
};

// table_row_wise's node of each of the layer's tables on `nodes` nodes: the layer's table_nodes
// when given (InputError naming the entry at or above `nodes`), else place_tables over the nodes.
std::vector<int> table_nodes(const LayerSpec& spec, int nodes);

// The most rows a rank holds when each slot is split in `parts` row blocks: rank 0's full blocks.
std::int64_t most_rows_in_blocks(const LayerSpec& spec, int parts);

// A scheme whose owner pools whole bags of the tables (the layer's slots) it holds, and an
// alltoallv sends each rank its pooled vectors: `owner_of_slot` places each table on a rank
// (HugeCTR's localized slot, TorchRec's table-wise).
std::unique_ptr<EmbeddingScheme> make_whole_table_scheme(const LayerSpec& spec, std::vector<int> owner_of_slot);

// Whole tables (the layer's slots) placed on `bins` owners, largest first onto the least loaded
// (TorchRec's greedy table-wise placement; ties to the lowest owner). Returns each slot's owner.
std::vector<int> place_tables(const LayerSpec& spec, int bins);

}  // namespace embscale::embedding
