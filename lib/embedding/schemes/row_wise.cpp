// TorchRec's row-wise sharding: each table (a slot of the layer) split into contiguous row blocks,
// block r on rank r (so a Zipf head, the lowest ids, lands on rank 0, unlike key % ranks: the
// report's per-rank lookups show it); partial bags pooled on the owners, reduce-scatter forward,
// all-gather backward (TorchRec's RwPooledEmbeddingDist).
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {

namespace {

std::unique_ptr<EmbeddingScheme> make_row_wise(const LayerSpec& spec) {
  const RowBlocks blocks(spec, spec.comm->size());
  OwnedKeys owned;
  for (std::int32_t s = 0; s < spec.slots(); ++s) blocks.add_block(owned, spec, s, spec.comm->rank());
  PooledPlan plan;
  plan.output = PooledOutput::kReduceScatter;
  return make_pooled_scheme(spec, std::move(plan), spec.make_store(owned, spec.dim()),
                            OwnerRule::row_blocks(blocks.offsets, blocks.block));
}

}  // namespace

// Collectives per step: counts and pairs (alltoall + alltoallv), reduce-scatter and all-gather.
SchemeEntry row_wise_scheme() {
  SchemeEntry entry{.name = "row_wise", .config_type = kShardedEmbedding, .origin = "TorchRec", .make = make_row_wise};
  entry.most_rows = most_rows_in_blocks;
  entry.runs_on_device = true;
  entry.splits_key_spaces = true;
  entry.planner = PlannerModel{.ownership = Ownership::kRowBlocks, .collectives = 4};
  return entry;
}

}  // namespace embscale::embedding
