// TorchRec's table-row-wise sharding: each table (a slot of the layer) on one node, placed largest
// first onto the least loaded node, its rows split in blocks over the node's ranks; partial bags
// are summed inside the node (reduce-scatter) and an alltoallv across nodes sends each rank its
// pooled vectors (TorchRec's TwRwPooledEmbeddingDist). A "node" is ranks_per_node consecutive
// ranks: the layer's ranks_per_node, or else the ranks of one host (Communicator::split_by_host),
// so tests and studies can place several nodes on one host.
#include <algorithm>

#include "embedding/pooled_scheme.hpp"

#include "core/error.hpp"
#include "embedding/scheme_registry.hpp"

namespace embscale::embedding {
namespace {

int ranks_per_node(const LayerSpec& spec) {
  if (spec.config->ranks_per_node > 0) return spec.config->ranks_per_node;
  // Over the host side: a GPU layer's NCCL communicator would set up a whole NCCL split to count.
  const int host_ranks = spec.comm->host_communicator().split_by_host()->size();
  // Every host must hold as many ranks: the smallest and largest host agree.
  const int smallest = spec.comm->allreduce(host_ranks, comm::ReduceOp::kMin);
  const int largest = spec.comm->allreduce(host_ranks, comm::ReduceOp::kMax);
  if (smallest != largest)
    throw InputError(spec.path + ".ranks_per_node: the hosts run " + std::to_string(smallest) + " to " +
                     std::to_string(largest) + " ranks each; table_row_wise needs equal nodes: set ranks_per_node");
  return host_ranks;
}

std::unique_ptr<EmbeddingScheme> make_table_row_wise(const LayerSpec& spec) {
  const int rank = spec.comm->rank(), ranks = spec.comm->size();
  const int rpn = ranks_per_node(spec), nodes = ranks / rpn;
  if (ranks % rpn != 0)
    throw InputError(spec.path + ".ranks_per_node: " + std::to_string(ranks) + " ranks do not split into nodes of " +
                     std::to_string(rpn));
  const std::vector<int> node_of_table = table_nodes(spec, nodes);
  const RowBlocks blocks(spec, rpn);
  PooledPlan plan;
  plan.output = PooledOutput::kNodeThenCross;
  plan.ranks_per_node = rpn;
  plan.owner_slots.resize(static_cast<std::size_t>(nodes));
  OwnedKeys owned;
  for (std::int32_t s = 0; s < spec.slots(); ++s) {
    const int node = node_of_table[static_cast<std::size_t>(s)];
    plan.owner_slots[static_cast<std::size_t>(node)].push_back(s);
    if (node == rank / rpn) blocks.add_block(owned, spec, s, rank % rpn);
  }
  return make_pooled_scheme(
      spec, std::move(plan), spec.make_store(owned, spec.dim()),
      OwnerRule::node_row_blocks(std::vector<std::int32_t>(node_of_table.begin(), node_of_table.end()), rpn,
                                 blocks.offsets, blocks.block));
}

// Before a run the hosts are not known: with ranks_per_node unset, one node of every rank is
// assumed here (the run's stores check their rows again when made, on the hosts' nodes).
std::int64_t most_rows_table_row_wise(const LayerSpec& spec, int ranks) {
  const int rpn = spec.config->ranks_per_node > 0 ? spec.config->ranks_per_node : ranks;
  if (rpn > ranks || ranks % rpn != 0) return 0;  // check_table_row_wise refuses it
  const std::vector<int> node_of_table = table_nodes(spec, ranks / rpn);
  const RowBlocks blocks(spec, rpn);
  std::vector<std::int64_t> rows(static_cast<std::size_t>(ranks / rpn), 0);
  for (std::size_t s = 0; s < node_of_table.size(); ++s)
    rows[static_cast<std::size_t>(node_of_table[s])] += blocks.block[s];
  return *std::max_element(rows.begin(), rows.end());
}

void check_table_row_wise(const LayerSpec& spec, int ranks) {
  const int rpn = spec.config->ranks_per_node;
  if (rpn > 0 && (rpn > ranks || ranks % rpn != 0))
    throw InputError(spec.path + ".ranks_per_node: expected a divisor of the run's " + std::to_string(ranks) +
                     " ranks (each node holds ranks_per_node of them), got " + std::to_string(rpn));
  if (rpn > 0) (void)table_nodes(spec, ranks / rpn);  // its table_nodes name nodes of the run
}

}  // namespace

// Collectives per step: counts and pairs (alltoall + alltoallv), reduce-scatter in the node and
// alltoallv across nodes forward, alltoallv and all-gather in the node backward.
SchemeEntry table_row_wise_scheme() {
  SchemeEntry entry{
      .name = "table_row_wise", .config_type = kShardedEmbedding, .origin = "TorchRec", .make = make_table_row_wise};
  entry.check = check_table_row_wise;
  entry.places_ranks_in_nodes = true;
  entry.most_rows = most_rows_table_row_wise;
  entry.runs_on_device = true;
  entry.splits_key_spaces = true;
  entry.planner = PlannerModel{.ownership = Ownership::kNodeRowBlocks, .collectives = 6};
  return entry;
}

}  // namespace embscale::embedding
