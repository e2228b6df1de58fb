// TorchRec's column-wise sharding: every rank holds a slice of the columns of every row (the
// first dim % ranks ranks one column more), receives every key, pools its columns of every bag,
// and an alltoallv sends each rank its columns of its bags, which it places side by side.
#include "embedding/pooled_scheme.hpp"

#include "core/error.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {

namespace {

std::unique_ptr<EmbeddingScheme> make_column_wise(const LayerSpec& spec) {
  const int rank = spec.comm->rank(), ranks = spec.comm->size();
  PooledPlan plan;
  plan.output = PooledOutput::kAllToAll;
  plan.every_rank_gets_every_key = true;
  std::int32_t first = 0;
  for (int r = 0; r < ranks; ++r) {
    const std::int32_t count = spec.dim() / ranks + (r < spec.dim() % ranks ? 1 : 0);
    plan.column_first.push_back(first);
    plan.column_count.push_back(count);
    first += count;
    plan.owner_slots.emplace_back();
    for (std::int32_t s = 0; s < spec.slots(); ++s) plan.owner_slots.back().push_back(s);
  }
  const OwnedKeys owned = spec.all_keys();
  // A shard is its own table (as in TorchRec): an optimizer of its width, whose state (row-wise
  // AdaGrad's per-row sum, LazyGlobal Adam's) is per shard.
  const std::int32_t width = plan.column_count[static_cast<std::size_t>(rank)];
  std::unique_ptr<SparseOptimizer> optimizer;
  LayerSpec shard = spec;
  if (spec.optimizer) {
    optimizer = make_sparse_optimizer(spec.config->optimizer, width);
    shard.optimizer = optimizer.get();
  }
  auto store = shard.make_store(owned, width, plan.column_first[static_cast<std::size_t>(rank)]);
  return make_pooled_scheme(spec, std::move(plan), std::move(store), OwnerRule::every_rank(), std::move(optimizer));
}

void check_column_wise(const LayerSpec& spec, int ranks) {
  if (spec.dim() < ranks)
    throw InputError(spec.path +
                     ".sparse_embedding_hparam.embedding_vec_size: column_wise needs at least one column "
                     "per rank (>= " +
                     std::to_string(ranks) + "), got " + std::to_string(spec.dim()));
  if (spec.config->storage.dynamic)
    throw InputError(spec.path +
                     ".storage.type: column_wise runs on static storage only (a dynamic table's rows are "
                     "whole: dynamicemb shards its tables row-wise)");
}

// The first dim % ranks ranks store one column more (make_column_wise).
std::int32_t widest_column_slice(const LayerSpec& spec, int ranks) { return (spec.dim() + ranks - 1) / ranks; }

}  // namespace

// Collectives per step: counts and pairs (alltoall + alltoallv), the column slices of the pooled
// vectors and their gradients (two alltoallv).
SchemeEntry column_wise_scheme() {
  SchemeEntry entry{
      .name = "column_wise", .config_type = kShardedEmbedding, .origin = "TorchRec", .make = make_column_wise};
  entry.check = check_column_wise;
  entry.most_rows = every_row;
  entry.widest_row = widest_column_slice;
  entry.runs_on_device = true;
  entry.planner = PlannerModel{.ownership = Ownership::kEveryRank, .collectives = 4, .static_only = true};
  return entry;
}

}  // namespace embscale::embedding
