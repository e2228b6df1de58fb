// A training run of the embedding layers of a config on synthetic batches: the SPMD loop every
// rank executes, and what it measured.
//
// Timed region: one iteration's phases on this rank (generation of the batch is outside: the
// workload generator is not the system under test). Nothing inside it synchronises beyond the
// scheme's own collectives. Step time of an iteration = max over ranks of the rank's summed
// phases, computed after the loop.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "comm/communicator.hpp"
#include "config/config.hpp"

namespace embscale::embedding {

struct RunMeasurements {
  std::vector<std::string> phase_names;                           // in execution order
  std::vector<std::string> phase_meanings;                        // what each phase covers (same order)
  std::map<std::string, std::vector<double>> timings;             // this rank: phase -> [iteration] s
  std::map<std::string, std::vector<std::int64_t>> counters;      // this rank: name -> [iteration]
  std::vector<double> step_time;                                  // all ranks agree: max over ranks
  std::vector<double> loss;                                       // all ranks agree: global loss
};

struct RunSummary {
  std::int64_t iterations = 0;
  double step_time_median_s = 0;
  double step_time_p95_s = 0;
  double throughput_samples_per_s = 0;   // global batch / median step time
  double throughput_keys_per_s = 0;      // global key occurrences per step / median step time
  double bytes_sent_per_step = 0;        // all ranks, mean over iterations
  double load_imbalance = 0;             // max over ranks / mean of keys served as owner
  double final_loss = 0;
};

struct TrainingRun {
  RunMeasurements measurements;
  RunSummary summary;
};

// Checks what depends on the number of ranks (each rank's share of the vocabulary fits
// max_vocabulary_size_per_gpu; at least one sample per rank). Throws InputError naming the field.
void check_config_for_ranks(const config::Config& config, int ranks);

// Checks the environment a run reads (EMBSCALE_FAULT_INJECT). Throws InputError naming it.
void check_run_environment();

// Asked by every rank at every iteration boundary, outside the timed region; collective. Returns
// the agreed stop signal (0: go on), e.g. comm::any_rank_stopping.
using StopCheck = std::function<int()>;

// Runs solver.warmup_iter untimed then solver.max_iter timed iterations. Collective. Progress
// lines go to `progress` on rank 0 every solver.display iterations (null: silent), prefixed by
// `progress_prefix`. When `stop_check` (if given) returns a signal, every rank throws
// StopRequested at that boundary: the run is abandoned whole.
TrainingRun run_training(comm::Communicator& comm, const config::Config& config, std::ostream* progress,
                         const StopCheck& stop_check = {}, const std::string& progress_prefix = "");

}  // namespace embscale::embedding
