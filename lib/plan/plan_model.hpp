// PlanModel: what the planner knows of a config on P ranks, and its prediction of any choice of
// schemes and owners. Each layer is a LayerContext (planned or fixed; its shape, its candidate
// schemes); each table's loads under each ownership are analytic (table_load.hpp) or measured
// (sampled_load.hpp) and cached; evaluate() turns a choice per table into the planned layers with
// their per-rank loads, work, time and memory, and says whether they fit. The search over choices
// is planner.cpp's.
#pragma once

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "config/config.hpp"
#include "plan/planner.hpp"
#include "plan/sampled_load.hpp"
#include "plan/scheme_cost.hpp"
#include "plan/table_load.hpp"

namespace embscale::plan {

// A layer of the given config as the planner sees it.
struct LayerContext {
  std::size_t index = 0;  // in config.embeddings
  const config::EmbeddingLayer* layer = nullptr;
  bool planned = false;
  bool skew_aware = true;
  std::vector<const SchemeModel*> candidates;  // planned layers: the schemes it may run
  const SchemeModel* fixed = nullptr;          // fixed layers: the model of its scheme (null: none)
  std::string fixed_name;                      // fixed layers: the registry's name
  std::vector<int> fixed_owner;                // fixed whole-table layers: each slot's owner
  LayerShape shape;
  double row_bytes = 0.0;         // a stored row with its optimizer state
  double column_row_bytes = 0.0;  // the widest column shard's stored row (its memory)
  // Evaluation on static fp32 rows: an owner that pools reads every pair's row in place, without
  // de-duplicating (PooledExchange), so its lookups are its pairs.
  bool owners_read_every_pair = false;
};

// The ranks a placed table occupies under `model`: 1 for a whole table (kOneRank: its owner is a
// rank), the node's ranks for kNodeRowBlocks (its owner is a node), 0 for a table spread over
// every rank (no owner).
int placed_unit(const LayerContext& context, const SchemeModel& model);

// A table's place: the layer context, the slot's position in that layer, its scheme and owner.
struct Choice {
  std::size_t context = 0;
  std::size_t position = 0;
  std::int32_t slot = 0;
  const SchemeModel* scheme = nullptr;  // null: not predicted (a fixed scheme the planner does not model)
  int owner = 0;
  bool operator==(const Choice&) const = default;
};

struct Evaluation {
  double seconds = 0.0;
  bool fits = false;
  std::string shortfall;             // why it does not fit
  std::vector<PlannedLayer> layers;  // with `detail`
};

class PlanModel {
 public:
  PlanModel(const config::Config& config, int ranks);

  const config::Config& config() const noexcept { return config_; }
  int ranks() const noexcept { return ranks_; }
  const CostParameters& cost() const noexcept { return cost_; }
  std::int64_t memory_limit() const noexcept { return memory_limit_; }
  // planner.hardware's description, or null.
  const config::HardwareDescription* hardware() const noexcept { return hardware_ ? &*hardware_ : nullptr; }
  const std::vector<LayerContext>& contexts() const noexcept { return contexts_; }

  const TableModel& table(bool aware, std::int32_t slot);
  const std::vector<RankLoad>& loads(bool aware, std::int32_t slot, Ownership ownership);
  // The table's loads as the layer's scheme serves them (owners_read_every_pair: lookups = pairs).
  const std::vector<RankLoad>& owner_loads(const LayerContext& context, const SchemeModel& model, std::int32_t slot);
  // add_table_work with the table's loads under the scheme's ownership.
  void add_work(const LayerContext& context, const SchemeModel& model, std::int32_t slot, int owner,
                std::vector<RankWork>& work);
  // The run's steps: warm-up and timed.
  double run_steps() const {
    return static_cast<double>(std::max<std::int64_t>(1, config_.solver.warmup_iter + config_.solver.max_iter));
  }
  // The distinct hot keys of a global batch under kHotReplicas (the rows every rank updates).
  double hot_replica_distinct(bool aware, std::int32_t slot);
  // A dynamic table's distinct keys per rank over the run (warm-up and timed steps).
  const std::vector<double>& run_keys(bool aware, std::int32_t slot, Ownership ownership);
  // The planned layers of `choices` (with their predictions when `detail`), and whether they fit.
  Evaluation evaluate(const std::vector<Choice>& choices, bool detail);

  // The slots whose loads were measured (no analytic model), why, and on how many batches.
  const std::vector<std::int32_t>& measured_slots() const noexcept { return measured_slots_; }
  const std::vector<std::string>& measured_reasons() const noexcept { return measured_reasons_; }
  std::int64_t measured_batches() const noexcept { return sample_ ? sample_->batches() : 0; }

 private:
  LayerContext make_context(std::size_t i, const config::PlannerSettings* settings);
  bool measured(bool aware, std::int32_t slot) const;
  // The ranks of a node for `layer`'s table_row_wise: its ranks_per_node, else the hardware
  // description's devices per node (at most the ranks), else every rank.
  int node_ranks(const config::EmbeddingLayer& layer) const;
  // The layer context that reads `slot` (with `aware`'s policy), or null.
  const LayerContext* context_of(bool aware, std::int32_t slot) const;
  // The slot's hot rows (TableModel::hot_rows): a fixed hot_replicated layer's hot_rows, the
  // planner's choice where a planned layer may run hot_replicated, else 0.
  std::int64_t hot_rows(bool aware, std::int32_t slot, const TableModel& table) const;
  const LoadSample& sample();
  // A two-tier dynamic layer's fast tier on each rank (tier_model.hpp) from its tables' choices:
  // its hit rate, the fast tier's table in `layer`'s memory, the rest of the rank's `keys` in its
  // slow tier, the rows the misses move in its work.
  void add_fast_tier(const LayerContext& context, const std::vector<const Choice*>& choices,
                     const std::vector<double>& keys, PlannedLayer& layer);
  // planner.target_hit_rate and the host memory the slow tiers take (summed over layers in
  // `slow_memory`): the first shortfall into `shortfall`.
  void check_fast_tier(const PlannedLayer& layer, std::vector<double>& slow_memory, std::string& shortfall) const;

  const config::Config& config_;
  int ranks_;
  std::optional<config::HardwareDescription> hardware_;
  CostParameters cost_;
  std::int64_t memory_limit_ = 0;
  std::vector<LayerContext> contexts_;
  std::vector<bool> measured_;  // per slot
  std::vector<std::int32_t> measured_slots_;
  std::vector<std::string> measured_reasons_;
  std::optional<LoadSample> sample_;
  std::map<std::pair<bool, std::int32_t>, TableModel> tables_;
  std::map<std::tuple<bool, std::int32_t, int>, std::vector<RankLoad>> loads_;
  std::map<std::tuple<bool, std::int32_t, int>, std::vector<RankLoad>> pair_loads_;  // owner_loads reading every pair
  std::map<std::tuple<bool, std::int32_t, int>, std::vector<double>> run_keys_;
};

}  // namespace embscale::plan
