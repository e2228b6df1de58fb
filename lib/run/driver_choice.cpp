#include "run/driver_choice.hpp"

#include "run/parameter_server_run.hpp"

namespace embscale::run {

void check_training_for_ranks(const config::Config& config, int ranks) {
  if (config::runs_on_parameter_servers(config))
    (void)check_parameter_server_run(config, ranks);
  else
    check_config_for_ranks(config, ranks);
}

TrainingRun train(comm::Communicator& comm, const config::Config& config, BatchSource& source,
                             std::ostream* progress, const StopCheck& stop_check,
                             const std::string& progress_prefix) {
  if (config::runs_on_parameter_servers(config))
    return run_parameter_server(comm, config, source, progress, stop_check, progress_prefix);
  return run_training(comm, config, source, progress, stop_check, progress_prefix);
}

}  // namespace embscale::run
