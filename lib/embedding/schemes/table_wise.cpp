// TorchRec's table-wise sharding: each table (a slot of the layer) whole on one rank, the one
// `table_ranks` names (the planner's placement, lib/plan), else placed largest first onto the
// least loaded rank; the owner pools whole bags and an alltoallv sends each rank its pooled vectors
// (TorchRec's TwPooledEmbeddingDist).
#include <string>

#include "core/error.hpp"
#include "embedding/pooled_scheme.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {

namespace {

std::vector<int> table_owners(const LayerSpec& spec, int ranks) {
  const auto& given = spec.config->table_ranks;
  if (!given.empty()) return std::vector<int>(given.begin(), given.end());
  return place_tables(spec, ranks);
}

std::unique_ptr<EmbeddingScheme> make_table_wise(const LayerSpec& spec) {
  return make_whole_table_scheme(spec, table_owners(spec, spec.comm->size()));
}

void check_table_wise(const LayerSpec& spec, int ranks) {
  const auto& given = spec.config->table_ranks;
  for (std::size_t i = 0; i < given.size(); ++i)
    if (given[i] >= ranks)
      throw InputError(spec.path + ".table_ranks[" + std::to_string(i) + "]: expected a rank below " +
                       std::to_string(ranks) + " (the ranks of the run), got " + std::to_string(given[i]));
}

}  // namespace

// Collectives per step: counts and pairs (alltoall + alltoallv), the pooled vectors and their
// gradients (two alltoallv).
SchemeEntry table_wise_scheme() {
  SchemeEntry entry{
      .name = "table_wise", .config_type = kShardedEmbedding, .origin = "TorchRec", .make = make_table_wise};
  entry.check = check_table_wise;
  entry.table_owners = table_owners;
  entry.runs_on_device = true;
  entry.planner = PlannerModel{.ownership = Ownership::kOneRank, .collectives = 4};
  return entry;
}

}  // namespace embscale::embedding
