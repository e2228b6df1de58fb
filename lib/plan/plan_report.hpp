// A sharding plan for people and for files: the table `embscale plan` prints, the JSON
// `run` records as the run attribute `sharding_plan`, and the per-rank predictions it records as
// the table plan/loads (results/schema.md), against which the measured counters are compared.
#pragma once

#include <ostream>

#include <nlohmann/json.hpp>

#include "plan/capacity_search.hpp"
#include "plan/planner.hpp"
#include "report/table.hpp"

namespace embscale::plan {

// Per planned layer: scheme, tables and owners; per rank: expected pairs, lookups, bytes moved,
// memory and time.
void print_plan(std::ostream& out, const ShardingPlan& plan);

// The plan and its predictions (every figure print_plan shows), and the planned config.
nlohmann::json plan_json(const ShardingPlan& plan);

// Capacity planning's answer: the fewest ranks, the budget, and every count tried (its predicted
// step, its fullest rank's memory, kept or why rejected).
void print_capacity(std::ostream& out, const CapacityAnswer& answer);
nlohmann::json capacity_json(const CapacityAnswer& answer);

// One row per (planned layer, rank): layer (its index in the planned config's layers with a
// prediction, as plan_json lists them), rank, pairs, lookups, seconds, memory_bytes, comm_bytes.
report::ReportTable plan_loads_table(const ShardingPlan& plan);

}  // namespace embscale::plan
