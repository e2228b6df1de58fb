// HugeCTR's DistributedSlotSparseEmbeddingHash = SOK's distributed sparse embedding (seed 000):
// a key lives on rank key % ranks; every owner pools the partial bags of the whole global batch
// from its keys, a reduce-scatter sums them and gives each rank its bags; backward, an all-gather
// of the pooled gradients.
#include "embedding/pooled_scheme.hpp"

namespace embscale::embedding {

std::unique_ptr<EmbeddingScheme> make_distributed_slot(const LayerSpec& spec) {
  const int ranks = spec.comm->size();
  PooledPlan plan;
  plan.output = PooledOutput::kReduceScatter;
  return make_pooled_scheme(spec, std::move(plan), spec.make_store(spec.keys_modulo_ranks(), spec.dim()),
                            [ranks](Key key, std::int32_t) { return static_cast<int>(key % ranks); });
}

}  // namespace embscale::embedding
