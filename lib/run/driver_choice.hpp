// Which driver trains a config: the engine (every rank runs every layer's scheme; lib/embedding)
// or the parameter server (the ranks split into trainers and servers; lib/ps), chosen by the
// layer's sharding. The one place `run` and `sweep` choose between them.
#pragma once

#include <ostream>
#include <string>

#include "comm/communicator.hpp"
#include "config/config.hpp"
#include "core/batch_source.hpp"
#include "run/training_run.hpp"

namespace embscale::run {

// What a run of `config` on `ranks` ranks needs of the count (InputError naming the field).
void check_training_for_ranks(const config::Config& config, int ranks);

// Collective: the run (run_training's contract).
TrainingRun train(comm::Communicator& comm, const config::Config& config, BatchSource& source,
                             std::ostream* progress, const StopCheck& stop_check,
                             const std::string& progress_prefix = "");

}  // namespace embscale::run
