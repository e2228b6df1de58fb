// What a step of each scheme the planner chooses among costs each rank, from the loads of
// table_load.hpp: the key operations (routing, de-duplication, the pairs an owner pools), the
// distinct rows it looks up and updates, the bytes it moves through memory (rows read, pooled,
// updated; gradient buffers) and the bytes it sends and receives, each as the engine's data flow
// does it (lib/embedding/README.md's phase tables), and a time per rank from a cost per key, per
// row, per byte and per collective call (CostParameters: a planner parameter; the defaults were
// measured on the development machine, lib/plan/README.md says how).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "embedding/scheme_registry.hpp"
#include "plan/table_load.hpp"

namespace embscale::plan {

// A scheme as the planner sees it: its registry entry's planner model (lib/embedding/
// scheme_registry.hpp), nothing kept here. The cost of a step follows from the ownership: each
// ownership is one data flow (add_table_work).
struct SchemeModel {
  const char* name;  // the scheme registry's name
  Ownership ownership;
  int collectives;   // collective calls per step (forward and backward)
  bool static_only;  // refused on dynamic storage (column_wise, data_parallel)
  const embedding::SchemeEntry* entry;
};

// Every scheme the planner can choose (its entry's model is choosable), in the order it tries
// them: by ownership, then the registry's order.
std::span<const SchemeModel> planned_schemes();
// The model of a scheme by its registry name, choosable or only predicted (localized_slot,
// distributed_sparse); null when the planner has none.
const SchemeModel* planned_scheme(std::string_view name);
// The model of a scheme the planner may choose; null for the others.
const SchemeModel* choosable_scheme(std::string_view name);

// The layer-wide quantities a table's cost depends on.
struct LayerShape {
  std::int64_t samples = 0;  // global batch
  int ranks = 1;
  std::int32_t dim = 0;
  std::int32_t state_width = 0;         // optimizer values per row (0 in evaluation)
  std::int32_t column_state_width = 0;  // per row of a column shard of dim / ranks columns
  double value_bytes = 4.0;             // bytes per stored value (fp32 4, fp16 and bf16 2)
  int ranks_per_node = 1;               // kNodeRowBlocks: the ranks of a node (a divisor of ranks)
};

struct RankWork {
  double key_ops = 0.0;       // key occurrences routed, de-duplicated and pooled (per pair)
  double row_ops = 0.0;       // distinct rows looked up and updated (per row: its hash probe, its call)
  double memory_bytes = 0.0;  // bytes read or written in the rank's memory
  double comm_bytes = 0.0;    // bytes sent plus bytes received
  // Of comm_bytes, those whose link is known (a hierarchical exchange: kNodeRowBlocks), costed
  // on that link; the rest at the plan's blended cost per byte.
  double intra_node_bytes = 0.0;
  double inter_node_bytes = 0.0;
  double slow_tier_bytes = 0.0;  // rows moved to and from a two-tier table's slow tier (plan/tier_model.hpp)
};

struct CostParameters {
  double seconds_per_key = 0.0;
  double seconds_per_row = 0.0;
  double seconds_per_byte = 0.0;
  double seconds_per_comm_byte = 0.0;  // a byte sent or received, over the links a uniform exchange takes
  double seconds_per_collective = 0.0;
  double seconds_per_slow_byte = 0.0;  // a byte to or from the slow tier (host memory behind a GPU)
  // A byte sent or received inside a node, across nodes (a hardware description's links; else
  // seconds_per_comm_byte: cost_parameters).
  double seconds_per_intra_node_byte = 0.0;
  double seconds_per_inter_node_byte = 0.0;
};

// Adds one table's step to `work` (one entry per rank). `loads`: the per-rank loads of the
// scheme's ownership; a whole table (kOneRank) is placed on rank `owner`, a table of
// kNodeRowBlocks on node `owner` (its loads: the node's ranks', at 0 .. ranks_per_node - 1). `batch_distinct`: the
// table's distinct keys in a global batch (data_parallel updates them all on every rank), under
// kHotReplicas its distinct hot keys (every rank updates those).
void add_table_work(const SchemeModel& model, const LayerShape& shape, const TableModel& table,
                    const std::vector<RankLoad>& loads, double batch_distinct, int owner, std::vector<RankWork>& work);

// The hot rows hot_replicated should replicate of `table` (the prefix of its key space whose
// rows' occurrences save more routing and exchange than the rows' replication costs, at `cost`'s
// rates): 0 on one rank and under a permuted key mapping (its first keys are not its hottest).
std::int64_t worthwhile_hot_rows(const TableModel& table, const LayerShape& shape, const CostParameters& cost);

// A rank's compute and communication time.
double rank_seconds(const RankWork& work, const CostParameters& cost);

}  // namespace embscale::plan
