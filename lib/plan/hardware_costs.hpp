// What a hardware description (config/hardware.hpp) gives a plan on P ranks: its memory per rank
// (the device's memory) and its cost parameters. Memory traffic costs the device's bandwidth;
// a byte sent or received costs half a byte's time on its link (a rank sends and receives at
// once, each direction at the link's bandwidth), the links weighted by the share of a rank's
// peers inside its node ((min(P, D) - 1) / (P - 1) with D devices per node, the exchanges'
// destinations spread evenly); a collective call costs the slowest link's latency it crosses.
// Keys and rows cost what the description measured, else the planner's defaults (this project's
// development VM, lib/plan/README.md "Calibration"). A planner setting given explicitly wins over
// the description.
#pragma once

#include <optional>

#include "config/config.hpp"
#include "config/hardware.hpp"
#include "plan/scheme_cost.hpp"

namespace embscale::plan {

// The share of a rank's peers inside its node: 1 on one rank.
double intra_node_share(int ranks, std::int64_t devices_per_node);

// `fallback`'s costs (the planner's defaults) with what `hardware` knows for `ranks` ranks.
CostParameters hardware_costs(const config::HardwareDescription& hardware, int ranks, const CostParameters& fallback);

// planner.hardware of `config`, read (a relative path from the config's directory); none without.
std::optional<config::HardwareDescription> plan_hardware(const config::Config& config);

}  // namespace embscale::plan
