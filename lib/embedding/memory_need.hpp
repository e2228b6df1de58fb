// The host memory each rank allocates for the engine's layers before their first step, so that a
// run (and `validate --ranks`) refuses a table that cannot fit before any rank allocates it: a
// static table's rows are zero-filled when they are allocated, so an oversized one would push a
// shared node into the OOM killer rather than fail cleanly.
//
// Per layer on the host (a GPU layer's rows are the GPU's memory, checked where it allocates):
//   static storage   the rows the scheme places on the rank (SchemeEntry::table_owners exactly,
//                    else SchemeEntry::most_rows on every rank: an upper bound), each
//                    (stored width + the optimizer's state) x the value type's bytes; a column
//                    shard's width is SchemeEntry::widest_row;
//   dynamic storage  the KV table at its initial capacity (kv::initial_buckets: init_capacity, or
//                    max_capacity when it is 0), each slot its key, digest and score (17 bytes)
//                    and its row; a two-tier table's rows only up to global_hbm_for_values (the
//                    rest live in a file of slow_directory), its keys for the whole capacity.
// What a dynamic table grows to later is the planner's prediction (`embscale plan`), not
// allocated up front.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace embscale::embedding {

struct LayerMemoryNeed {
  std::string path;           // "layers[<name>]"
  std::string sized_by;       // the fields that size it, for messages
  std::vector<double> bytes;  // per rank
};

// Every layer the engine runs on the host, on `ranks` ranks (not an "auto" layer before its plan,
// nor a parameter server's table). The config's layers must have passed check_layers_for_ranks.
std::vector<LayerMemoryNeed> host_memory_at_start(const config::Config& config,
                                                  std::span<const std::int64_t> slot_sizes, int ranks);

// The parameter server's tables (layers of config::kParameterServerSharding) on `ranks` ranks of
// which the last `servers` serve (run::check_parameter_server_run's roles): a server's static shard
// holds the ids i with i % servers == its index (the most: ceil(vocabulary / servers) rows), a
// dynamic one its KV table at the initial capacity, sized as above; the trainers hold none.
std::vector<LayerMemoryNeed> parameter_server_memory_at_start(const config::Config& config,
                                                              std::span<const std::int64_t> slot_sizes, int ranks,
                                                              int servers);

// The rows each of `ranks` ranks holds of a static layer: table_owners' placement exactly, else
// most_rows on every rank.
struct SchemeEntry;
struct LayerSpec;
std::vector<std::int64_t> static_rows_per_rank(const LayerSpec& spec, const SchemeEntry& entry, int ranks);

}  // namespace embscale::embedding
