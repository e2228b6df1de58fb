// Simulation (`embscale simulate CONFIG --ranks P`): a run's key traffic on P virtual ranks in one
// process, counted rather than moved, on the config's own batches (a generator's or a trace's, in
// the order a run reads them). Per timed iteration and virtual rank it counts what a run's
// counters hold (keys, pairs sent and received, distinct keys looked up, the key exchange's bytes)
// with the engine's own routing: each layer's owner rule (embedding/owner_rule.hpp, built as its
// scheme builds it) and KeyRouter's de-duplication. Those counts are exact: a real run on P ranks
// records the same numbers (tests/cli/simulate_test.sh). The bytes of the output collectives
// depend on the config alone and are their wire bytes; every byte is split into the link it
// crosses (inside a node, across nodes). The planner's cost model (scheme_cost.hpp) turns each
// rank's counted work into time: the simulated step is a prediction, its counts are not.
//
// Schemes: every one with a planner model (table_wise, localized_slot, row_wise, distributed_slot,
// column_wise, data_parallel), all2all_dense and table_row_wise (their work in the cost model's
// terms, simulation.cpp). "auto" layers are planned first (the caller's plan_for_run). Not
// simulated: the parameter server, and a two-tier table's slow-tier traffic (the planner predicts
// it; lib/plan/README.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "config/config.hpp"
#include "plan/scheme_cost.hpp"

namespace embscale::plan {

struct SimulationOptions {
  int ranks = 1;
  std::int64_t iterations = 0;  // timed iterations to count; 0: the config's solver.max_iter
  // Consecutive ranks per node, for the link classes; 0: the hardware description's devices per
  // node (planner.hardware), else a layer's ranks_per_node (table_row_wise), else every rank in
  // one node.
  std::int64_t ranks_per_node = 0;
};

// What a run would record, for `ranks` ranks: per-rank arrays are [iteration * ranks + rank].
struct Simulation {
  int ranks = 0;
  std::int64_t ranks_per_node = 0;
  std::int64_t iterations = 0;
  std::int64_t global_batch = 0;
  CostParameters cost;
  std::string hardware;                     // "<name> (<file>)", or empty
  std::vector<std::string> phase_names;     // per layer (prefixed "<layer>." when there are several):
  std::vector<std::string> phase_meanings;  //   compute, communication
  std::map<std::string, std::vector<double>> timings;
  std::map<std::string, std::vector<std::int64_t>> counters;
  std::vector<double> step_time;  // [iteration]: summed over layers, each its slowest rank plus its calls
};

// Counts `config`'s timed iterations on options.ranks virtual ranks. InputError naming the layer
// when its scheme is not simulated, or the data holds too few batches; StopRequested at an
// iteration boundary once SIGTERM or SIGUSR1 arrived (core/stop_request.hpp).
Simulation simulate(const config::Config& config, const SimulationOptions& options);

// The names of the schemes simulate() counts, as prose ("a, b and c").
std::string simulated_scheme_names();

}  // namespace embscale::plan
