#include "bench/cli/training.hpp"

#include "ps/ps_run.hpp"

namespace embscale::cli {

void check_training_for_ranks(const config::Config& config, int ranks) {
  if (config::runs_on_parameter_servers(config))
    (void)ps::check_parameter_server_run(config, ranks);
  else
    embedding::check_config_for_ranks(config, ranks);
}

embedding::TrainingRun train(comm::Communicator& comm, const config::Config& config, BatchSource& source,
                             std::ostream* progress, const embedding::StopCheck& stop_check,
                             const std::string& progress_prefix) {
  if (config::runs_on_parameter_servers(config))
    return ps::run_parameter_server(comm, config, source, progress, stop_check, progress_prefix);
  return embedding::run_training(comm, config, source, progress, stop_check, progress_prefix);
}

}  // namespace embscale::cli
