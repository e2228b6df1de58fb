// A training run in parameter-server mode (Paddle's distributed lookup table): `embscale run` and
// `sweep` of a config whose embedding layer has "sharding": "parameter_server". The world's first
// ranks are trainers, the last `parameter_server.servers` ranks serve the table (ps_messages.hpp:
// who owns an id).
//
// Iterations: step s of every trainer is one iteration; a server's iteration s is its
// ps::ParameterServer::serve_through(s) (it ends when every trainer's pushes of step s are applied).
// Ranks meet (the stop check, progress) at iteration boundaries: every iteration in synchronous
// mode; every staleness + 1 iterations in asynchronous mode, so that between boundaries a trainer
// may run as far ahead as the bound allows.
//
// What the report holds (results/schema.md, "Parameter-server runs"): the trainers' phases
// (kTrainerPhases) and the servers' (kServerPhases) on every rank, zero where the rank has the
// other role; a step's time is the slowest trainer's step (servers are not summed into it; their
// busy and idle time are their phases); load_imbalance is over the servers' pulled keys.
#pragma once

#include <ostream>
#include <string>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch_source.hpp"
#include "embedding/step_recorder.hpp"
#include "run/training_run.hpp"

namespace embscale::run {

// A server's phases: they add up to its iteration's wall time.
inline constexpr embedding::PhaseDefinition kServerPhases[] = {
    {"server_read", "server: the shard's reads for pulls (an unseen id inserted with its initial row)"},
    {"server_update", "server: the optimizer's updates of the shard with the pushed gradients"},
    {"server_messages",
     "server: the rest of handling requests (receiving keys and gradients, sending rows, "
     "summing a synchronous step's pushes)"},
    {"server_idle", "server: waiting for the next request"},
};

struct RunRoles {
  int trainers = 0;
  int servers = 0;
  bool is_server(int rank) const noexcept { return rank >= trainers; }
};

// The roles of a run of `config` (runs_on_parameter_servers) on `ranks` ranks. InputError naming
// the parameter_server section's field when the count does not fit: with "trainers" given the run
// needs exactly trainers + servers ranks; without, at least servers + 1. Also checks that each
// trainer gets a sample of the global batch.
RunRoles check_parameter_server_run(const config::Config& config, int ranks);

// Runs solver.warmup_iter untimed then solver.max_iter timed steps; collective over `world`.
// `progress`, `stop_check` and `progress_prefix` as run_training's. The servers load
// their shards before the first step (load_directory) and save them after the last
// (save_directory).
TrainingRun run_parameter_server(comm::Communicator& world, const config::Config& config, BatchSource& source,
                                 std::ostream* progress, const StopCheck& stop_check = {},
                                 const std::string& progress_prefix = "");

}  // namespace embscale::run
