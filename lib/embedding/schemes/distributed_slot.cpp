// HugeCTR's DistributedSlotSparseEmbeddingHash = SOK's distributed sparse embedding:
// a key lives on rank key % ranks; every owner pools the partial bags of the whole global batch
// from its keys, a reduce-scatter sums them and gives each rank its bags; backward, an all-gather
// of the pooled gradients.
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {

namespace {

std::unique_ptr<EmbeddingScheme> make_distributed_slot(const LayerSpec& spec) {
  const int ranks = spec.comm->size();
  PooledPlan plan;
  plan.output = PooledOutput::kReduceScatter;
  return make_pooled_scheme(spec, std::move(plan), spec.make_store(spec.keys_modulo_ranks(), spec.dim()),
                            OwnerRule::modulo(ranks));
}

}  // namespace

// Collectives per step: counts and pairs (alltoall + alltoallv), reduce-scatter and all-gather.
SchemeEntry distributed_slot_scheme() {
  SchemeEntry entry{.name = "distributed_slot",
                    .config_type = "DistributedSlotSparseEmbeddingHash",
                    .origin = "HugeCTR",
                    .make = make_distributed_slot};
  entry.most_rows = most_rows_modulo;
  entry.runs_on_device = true;
  entry.planner = PlannerModel{.ownership = Ownership::kKeyModulo, .collectives = 4};
  return entry;
}

// SOK's name for the same scheme: run and predicted as distributed_slot, never chosen under this name.
SchemeEntry distributed_sparse_scheme() {
  SchemeEntry entry = distributed_slot_scheme();
  entry.name = "distributed_sparse";
  entry.config_type = "DistributedSparseEmbedding";
  entry.origin = "SOK (= HugeCTR's distributed slot)";
  entry.planner->choosable = false;
  return entry;
}

}  // namespace embscale::embedding
