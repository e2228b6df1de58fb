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

// Collective: the run (run_training's contract), then warn_of_refused_keys on std::cerr.
TrainingRun train(comm::Communicator& comm, const config::Config& config, BatchSource& source, std::ostream* progress,
                  const StopCheck& stop_check, const std::string& progress_prefix = "",
                  const RunDevices* devices = nullptr);

// The one line a run prints (on rank 0, to `err`) when its dynamic tables refused keys and a
// layer asked to be warned (storage safe_check_mode WARNING): the run-wide count, the layers, what
// to change. The tables themselves only count refusals (kv::CallStats::refused), so a run of many
// steps says it once instead of once per call.
void warn_of_refused_keys(const config::Config& config, const RunSummary& summary, int rank, std::ostream& err);

}  // namespace embscale::run
