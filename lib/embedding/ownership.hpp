// How a scheme places a table's keys on the ranks. A scheme's registry entry names its ownership;
// the planner's load model (lib/plan/table_load) predicts each rank's pairs and distinct keys from
// it, and its cost model (lib/plan/scheme_cost) the work of that ownership's data flow. The order
// is the planner's: it tries the schemes it may choose from the most concentrated placement to the
// most replicated.
#pragma once

namespace embscale::embedding {

enum class Ownership {
  kOneRank,  // the whole table on one rank (table_wise, localized_slot); the loads are the owner's, at rank 0
  // the whole table on one node of ranks_per_node consecutive ranks, in blocks of ceil(rows /
  // ranks_per_node) keys over them (table_row_wise); the loads are the node's, local rank l at l
  kNodeRowBlocks,
  kRowBlocks,  // contiguous blocks of ceil(rows / ranks) keys, block r on rank r (row_wise)
  kKeyModulo,  // unified key % ranks (distributed_slot)
  // each slot's first hot_rows keys on every rank (looked up by each rank for its own samples),
  // the rest by key % ranks (hot_replicated)
  kHotReplicas,
  kEveryRank,  // every rank gets every key, a slice of each row (column_wise)
  kReplicas,   // every rank holds every row and looks up its own samples' keys (data_parallel)
};

}  // namespace embscale::embedding
