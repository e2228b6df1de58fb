// HugeCTR's LocalizedSlotSparseEmbeddingHash: a whole slot on one rank (slot % ranks), which pools
// whole bags of its slots; an alltoallv sends each rank the pooled vectors of its samples.
#include "embedding/pooled_scheme.hpp"

namespace embscale::embedding {

std::unique_ptr<EmbeddingScheme> make_localized_slot(const LayerSpec& spec) {
  std::vector<int> owner;
  for (std::int32_t s = 0; s < spec.slots(); ++s) owner.push_back(s % spec.comm->size());
  return make_whole_table_scheme(spec, std::move(owner));
}

}  // namespace embscale::embedding
