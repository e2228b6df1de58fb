// HugeCTR's LocalizedSlotSparseEmbeddingHash: a whole slot on one rank (slot % ranks), which pools
// whole bags of its slots; an alltoallv sends each rank the pooled vectors of its samples.
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {

namespace {

std::vector<int> slot_owners(const LayerSpec& spec, int ranks) {
  std::vector<int> owner;
  for (std::int32_t s = 0; s < spec.slots(); ++s) owner.push_back(s % ranks);
  return owner;
}

std::unique_ptr<EmbeddingScheme> make_localized_slot(const LayerSpec& spec) {
  return make_whole_table_scheme(spec, slot_owners(spec, spec.comm->size()));
}

}  // namespace

// Predicted as table_wise's data flow with its own placement, never chosen (table_wise places better).
SchemeEntry localized_slot_scheme() {
  SchemeEntry entry{.name = "localized_slot",
                    .config_type = "LocalizedSlotSparseEmbeddingHash",
                    .origin = "HugeCTR",
                    .make = make_localized_slot};
  entry.also_config_type = "LocalizedSlotSparseEmbeddingOneHot";
  entry.table_owners = slot_owners;
  entry.runs_on_device = true;
  entry.planner = PlannerModel{.ownership = Ownership::kOneRank, .collectives = 4, .choosable = false};
  return entry;
}

}  // namespace embscale::embedding
