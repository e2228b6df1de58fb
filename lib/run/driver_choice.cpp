#include "run/driver_choice.hpp"

#include <iostream>

#include "run/checkpoint.hpp"
#include "run/online_dumps.hpp"
#include "run/parameter_server_run.hpp"

namespace embscale::run {
namespace {

// The layers whose tables report refusals as warnings (storage.safe_check_mode WARNING), joined.
std::string warning_layers(const config::Config& config) {
  std::string names;
  for (const auto& layer : config.embeddings)
    if (layer.storage.dynamic && layer.storage.table.safe_check == kv::SafeCheck::kWarning)
      names += (names.empty() ? "" : ", ") + layer.name;
  return names;
}

}  // namespace

void warn_of_refused_keys(const config::Config& config, const RunSummary& summary, int rank, std::ostream& err) {
  const std::string layers = warning_layers(config);
  if (rank != 0 || summary.refused_keys == 0 || layers.empty()) return;
  err << "embscale: warning: the dynamic tables could not insert " << summary.refused_keys
      << " keys over the run's timed iterations (full buckets of higher scores; safe_check_mode WARNING in " << layers
      << "): their rows read as zeros; raise max_capacity or bucket_capacity (the report's "
      << "refused counter has them per step)\n";
}

void check_training_for_ranks(const config::Config& config, int ranks) {
  check_incremental_dumps(config);
  check_checkpoints(config);
  if (config::runs_on_parameter_servers(config)) (void)check_parameter_server_run(config, ranks);
  else check_config_for_ranks(config, ranks);
}

TrainingRun train(comm::Communicator& comm, const config::Config& config, BatchSource& source, std::ostream* progress,
                  const StopCheck& stop_check, const std::string& progress_prefix, const RunDevices* devices) {
  TrainingRun run = config::runs_on_parameter_servers(config)
                        ? run_parameter_server(comm, config, source, progress, stop_check, progress_prefix)
                        : run_training(comm, config, source, progress, stop_check, progress_prefix, devices);
  warn_of_refused_keys(config, run.summary, comm.rank(), std::cerr);
  return run;
}

}  // namespace embscale::run
