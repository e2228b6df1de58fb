// HugeCTR's LocalizedSlotSparseEmbeddingHash: a whole slot on one rank (slot % ranks), which pools
// whole bags of its slots; an alltoallv sends each rank the pooled vectors of its samples.
#include "embedding/pooled_scheme.hpp"

namespace embscale::embedding {

std::unique_ptr<EmbeddingScheme> make_localized_slot(const LayerSpec& spec) {
  const int rank = spec.comm->rank(), ranks = spec.comm->size();
  PooledPlan plan;
  plan.output = PooledOutput::kAllToAll;
  plan.owner_slots.resize(static_cast<std::size_t>(ranks));
  plan.column_first.assign(static_cast<std::size_t>(ranks), 0);
  plan.column_count.assign(static_cast<std::size_t>(ranks), spec.dim());
  OwnedKeys owned;
  for (std::int32_t s = 0; s < spec.slots(); ++s) {
    plan.owner_slots[static_cast<std::size_t>(s % ranks)].push_back(s);
    if (s % ranks == rank)
      owned.add(spec.slot_offsets[static_cast<std::size_t>(s)],
                spec.slot_offsets[static_cast<std::size_t>(s)] + spec.slot_sizes[static_cast<std::size_t>(s)]);
  }
  return make_pooled_scheme(spec, std::move(plan), spec.make_store(owned, spec.dim()),
                            [ranks](Key, std::int32_t slot) { return slot % ranks; });
}

}  // namespace embscale::embedding
