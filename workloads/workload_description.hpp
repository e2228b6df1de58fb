// One line per group of slots saying how their keys and bags are generated, for `embscale
// validate` and the progress header of generators ("slots 0-7: zipf 1.05, 4 keys per bag").
#pragma once

#include <ostream>
#include <string>

#include "config/config.hpp"

namespace embscale::workloads {

// The workload of one slot in words: distribution and its parameters, growth, drift, mapping,
// bag size and repeated keys.
std::string describe_slot_workload(const config::SlotWorkload& workload);

// "  slots 0-7: <description>" lines, consecutive slots with the same description grouped.
void print_synthetic_slots(std::ostream& out, const config::DataLayer& data);

}  // namespace embscale::workloads
