// TorchRec's table-wise sharding: each table (a slot of the layer) whole on one rank, placed
// largest first onto the least loaded rank; the owner pools whole bags and an alltoallv sends each
// rank its pooled vectors (TorchRec's TwPooledEmbeddingDist).
#include "embedding/pooled_scheme.hpp"

namespace embscale::embedding {

std::unique_ptr<EmbeddingScheme> make_table_wise(const LayerSpec& spec) {
  const int rank = spec.comm->rank(), ranks = spec.comm->size();
  const std::vector<int> owner = place_tables(spec, ranks);
  PooledPlan plan;
  plan.output = PooledOutput::kAllToAll;
  plan.owner_slots.resize(static_cast<std::size_t>(ranks));
  plan.column_first.assign(static_cast<std::size_t>(ranks), 0);
  plan.column_count.assign(static_cast<std::size_t>(ranks), spec.dim());
  OwnedKeys owned;
  for (std::int32_t s = 0; s < spec.slots(); ++s) {
    const auto u = static_cast<std::size_t>(s);
    plan.owner_slots[static_cast<std::size_t>(owner[u])].push_back(s);
    if (owner[u] == rank) owned.add(spec.slot_offsets[u], spec.slot_offsets[u] + spec.slot_sizes[u]);
  }
  return make_pooled_scheme(spec, std::move(plan), spec.make_store(owned, spec.dim()),
                            [owner](Key, std::int32_t slot) { return owner[static_cast<std::size_t>(slot)]; });
}

}  // namespace embscale::embedding
