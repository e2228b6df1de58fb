// The load a table puts on each rank per step, predicted before anything runs: how many (key, bag)
// pairs each rank receives as an owner and how many distinct keys it looks up, for each way the
// schemes split a table's keys among ranks (Ownership). A "table" is one slot of the Data layer
// (TorchRec's table = one of embscale's slots; lib/embedding/README.md).
//
// The skew-aware loads follow the slot's generator exactly (KeyPopularity, through the slot's key
// mapping: identity, or the generator's own permutation); the skew-blind ones (TorchRec's planner,
// which sees only a table's size and pooling factor) take every key as equally likely.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "core/batch.hpp"
#include "embedding/ownership.hpp"
#include "plan/key_popularity.hpp"

namespace embscale::plan {

// How a scheme splits a table's keys among the ranks: its registry entry says which.
using embedding::Ownership;

struct TableModel {
  std::int32_t slot = 0;  // in the Data layer
  std::int64_t rows = 0;
  Key offset = 0;         // the slot's first unified key
  double bag_size = 0.0;  // mean keys per (sample, slot) bag
  KeyPopularity popularity = KeyPopularity::uniform(1);
  // The unified key of key index i (the slot's offset + its mapped index).
  std::function<Key(std::int64_t)> key_of_index;
  bool identity_mapping = true;  // key_of_index(i) == offset + i
  // hot_replicated: the first keys of the slot's key space replicated on every rank (the layer's
  // hot_rows, or the planner's choice: worthwhile_hot_rows); 0 for every other scheme.
  std::int64_t hot_rows = 0;
  // table_row_wise: the ranks of a node, over which kNodeRowBlocks splits the table (its layer's).
  int ranks_per_node = 1;
};

struct RankLoad {
  double pairs = 0.0;     // (key, bag) pairs per step the rank handles as owner (data_parallel: its own)
  double distinct = 0.0;  // distinct keys per step it looks up as owner (data_parallel: its own)
  // hot_replicated: the occurrences of the replicated rows in the rank's own samples and their
  // distinct keys, read from its replica (pairs and distinct are then its cold keys as owner).
  double replica_pairs = 0.0;
  double replica_distinct = 0.0;

  double lookups() const noexcept { return distinct + replica_distinct; }  // the report's `lookups` counter
};

// Slot `slot` of `config`'s Data layer as a table, skew-aware (analytic, from the slot's
// generator) or skew-blind (uniform keys). InputError naming the slot's field when a skew-aware
// model is asked of a slot whose generator has none (key distribution, drift, ...) or of a trace.
TableModel table_model(const config::Config& config, std::int32_t slot, bool skew_aware);
// Whether slot `slot` has a skew-aware model; else the reason in `why_not`.
bool has_skew_model(const config::Config& config, std::int32_t slot, std::string& why_not);

// Expected loads per rank (size `ranks`) of one step of `samples` samples over all ranks
// (kOneRank: the owner's at 0; kNodeRowBlocks: the node's ranks' at 0 .. ranks_per_node - 1).
std::vector<RankLoad> expected_loads(const TableModel& table, Ownership ownership, int ranks, std::int64_t samples);

// The number of the table's keys each rank owns (the row counts of its static storage); kOneRank:
// all at rank 0; kNodeRowBlocks: the node's blocks at 0 .. ranks_per_node - 1; kEveryRank and kReplicas: every key on every rank.
std::vector<std::int64_t> owned_rows(const TableModel& table, Ownership ownership, int ranks);

// The expected number of distinct keys each rank sees over `steps` steps (what a dynamic table
// of the rank must hold without evicting).
std::vector<double> distinct_over_run(const TableModel& table, Ownership ownership, int ranks, std::int64_t samples,
                                      std::int64_t steps);

}  // namespace embscale::plan
