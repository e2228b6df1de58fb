// The plan as a config: the given config's JSON with each planned layer replaced by one layer per
// scheme chosen for its tables (named `<layer>_<scheme>` when it splits, else its own name; a
// table_wise part with its `table_ranks`), every other layer as given. What `embscale plan`
// writes and `run` runs.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "config/config.hpp"
#include "plan/planner.hpp"

namespace embscale::plan {

// The planned config's JSON; names each of `layers` as the config calls it.
nlohmann::json planned_config_json(const config::Config& config, std::vector<PlannedLayer>& layers);

}  // namespace embscale::plan
