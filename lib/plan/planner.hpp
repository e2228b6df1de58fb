// The sharding planner: for the layers whose "sharding" is "auto" (or every layer, with the
// planner section's all_layers), it chooses each table's scheme and placement (which rank owns a
// whole table; row blocks, key modulo, column slices or replicas) to minimise the predicted step
// time under each rank's memory limit. TorchRec's planner (enumerator -> proposer -> partitioner
// -> perf model) in embscale's terms:
//   enumerate   every table x every scheme the layer may run (memory_model: what it holds per rank)
//   propose     each scheme for every table (table_wise placed largest predicted time first onto the
//               least loaded rank that has room), and the least-memory choice per table
//   improve     move one table at a time to its best scheme or owner while the prediction drops
//   rate        the step time: per planned layer, its slowest rank's time plus its collectives'
//               fixed cost, summed over the layers (the engine runs them one after another)
// Skew-aware ("auto") loads come from the slots' generators (table_load.hpp); skew-blind
// ("auto_skew_blind", TorchRec's model) from the table sizes and pooling factors alone.
//
// The plan is a config: each planned layer is the auto layer's slots of one scheme
// (`<layer>_<scheme>` when the layer splits, else its own name), a table_wise one with its
// `table_ranks`. A plan refused for memory names the table and the shortfall (InputError).
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "config/hardware.hpp"
#include "plan/scheme_cost.hpp"
#include "plan/tier_model.hpp"

namespace embscale::plan {

// One layer of the planned config, with what the planner predicts for it per step.
struct PlannedLayer {
  std::string name;          // in the planned config
  std::string source_layer;  // the layer of the given config it comes from
  std::string scheme;
  bool planned = false;                   // chosen by the planner (false: a fixed layer, predicted only)
  std::vector<std::int32_t> slots;        // Data layer slots, ascending
  std::vector<std::int32_t> table_ranks;  // table_wise: owner per slot
  std::vector<std::int64_t> hot_rows;     // hot_replicated: replicated rows per slot
  std::vector<std::int32_t> table_nodes;  // table_row_wise: node per slot
  int ranks_per_node = 0;                 // table_row_wise: the ranks of a node
  std::vector<RankLoad> loads;            // per rank, summed over its tables
  std::vector<RankWork> work;             // per rank
  std::vector<double> seconds;            // per rank: compute and communication
  std::vector<double> memory_bytes;       // per rank
  int collectives = 0;                    // collective calls per step
  double step_seconds = 0.0;              // slowest rank plus the collectives' fixed cost
  // A two-tier dynamic layer (storage.caching or global_hbm_for_values): per rank its fast tier
  // (tier_model.hpp: hit rate, misses) and the bytes of rows its slow tier holds; empty for the
  // other layers. memory_bytes then counts the fast tier only, work.slow_tier_bytes the rows moved.
  std::vector<TierPrediction> fast_tier;
  std::vector<double> slow_memory_bytes;
  std::string tier_note;  // what the prediction assumes where no model fits exactly
};

struct ShardingPlan {
  int ranks = 0;
  std::string policy;  // "skew_aware", "skew_blind" or "skew_aware+skew_blind"
  CostParameters cost;
  std::int64_t memory_per_rank = 0;  // bytes
  // The hardware description planned for ("<name> (<file>)"; empty: none), and whether the
  // per-key and per-row costs are the planner's defaults because it measured none.
  std::string hardware;
  bool default_compute_costs = false;
  std::vector<PlannedLayer> layers;  // every layer of the planned config, in its order
  double step_seconds = 0.0;         // predicted, all layers
  // Slots whose loads were measured on the data's batches (no analytic model; sampled_load.hpp),
  // how many batches, and why each has no model.
  std::vector<std::int32_t> measured_slots;
  std::vector<std::string> measured_reasons;
  std::int64_t measured_batches = 0;
  nlohmann::json config;  // the planned config (the given one with its auto layers replaced)
};

// Whether `config` has a layer to plan.
bool has_auto_layers(const config::Config& config);

// What a plan's search is doing, said as it goes (its starting plans, each round of moves over
// them), for a caller that shows long work: `embscale plan` prints it when the search takes a
// while (its time grows with the ranks: seconds at 10^5).
using PlanProgress = std::function<void(const std::string& doing)>;

// Plans `config` (its batch resolved for `ranks`: config::resolve_batch_for_ranks) on `ranks`
// ranks. Layers that are not planned keep their scheme and are predicted too. InputError when
// the batch has fewer samples than ranks (nothing to plan for a rank without a sample).
ShardingPlan plan_sharding(const config::Config& config, int ranks, const PlanProgress& progress = {});

// The planned config, parsed (its directory and origin those of `config`): what `run` runs.
config::Config planned_config(const config::Config& config, const ShardingPlan& plan);

// The memory limit a plan gets without planner.memory_per_rank: this host's MemTotal divided by
// `ranks` (every rank on this host), less TorchRec's 15 % reserve.
std::int64_t default_memory_per_rank(int ranks);

// What `run` and `sweep` do before a run on `ranks` ranks: when `config` has layers to plan or a
// "planner" section, plans it (plan_sharding) and, when there was something to plan, replaces it
// by the planned config. Returns the plan (empty when neither).
std::optional<ShardingPlan> plan_for_run(config::Config& config, int ranks);

// The cost parameters of `settings` on `ranks` ranks: what it sets, else what `hardware` gives
// (plan/hardware_costs.hpp), else lib/plan's measured defaults.
CostParameters cost_parameters(const config::PlannerSettings* settings,
                               const config::HardwareDescription* hardware = nullptr, int ranks = 1);

}  // namespace embscale::plan
