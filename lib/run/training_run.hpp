// A training run of the embedding layers of a config (EmbeddingEngine) on the batches of a
// BatchSource: the SPMD loop every rank executes, and what it measured.
//
// Timed region: one iteration's phases on this rank (reading or generating the batch is outside:
// the data source is not the system under test). Nothing inside it synchronises beyond the
// schemes' own collectives. Step time of an iteration = max over ranks of the rank's summed
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
#include "core/batch_source.hpp"
#include "run/checkpoint.hpp"
#include "run/evaluation.hpp"
#include "run/online_dumps.hpp"
#include "sim/eviction_study.hpp"

namespace embscale::run {

class RunDevices;

struct RunMeasurements {
  std::vector<std::string> phase_names;                // in execution order
  std::vector<std::string> phase_meanings;             // what each phase covers (same order)
  std::map<std::string, std::vector<double>> timings;  // this rank: phase -> [iteration] s
  // This rank: name -> [iteration]. Run-wide: bytes_sent, bytes_recv; per phase that moves data:
  // <phase>.bytes_sent, <phase>.bytes_recv; per layer (qualified like its phases): the scheme's
  // own (keys, unique_keys, lookups, pairs_sent, ...) and the table's (hits, misses, inserts,
  // evictions, refused, not_admitted, table_size).
  std::map<std::string, std::vector<std::int64_t>> counters;
  std::vector<double> step_time;  // all ranks agree: max over ranks
  std::vector<double> loss;       // all ranks agree: global loss
  // All ranks agree: each training batch's AUC (the logits of its forward, before the update, over
  // every rank's samples), with a loss layer; empty without.
  std::vector<double> auc;
  // All ranks agree, per phase that runs a collective: nccl-tests' algorithm and bus bandwidth
  // (bytes/s) of each iteration: the largest per-rank bytes sent over the longest per-rank time,
  // and that times the collective's bus factor. Keys "<phase>.algbw", "<phase>.busbw".
  std::map<std::string, std::vector<double>> bandwidth;
  // All ranks agree: the config's evaluations in order (lib/run/evaluation.hpp); empty without.
  std::vector<EvaluationResult> evaluations;
};

struct RunSummary {
  std::int64_t iterations = 0;
  double step_time_median_s = 0;
  double step_time_p95_s = 0;
  double throughput_samples_per_s = 0;  // global batch / median step time
  double throughput_keys_per_s = 0;     // global key occurrences per step / median step time
  double bytes_sent_per_step = 0;       // all ranks, mean over iterations
  double load_imbalance = 0;            // max over ranks / mean of keys served as owner (lookups)
  double bytes_imbalance = 0;           // max over ranks / mean of bytes sent
  double unique_key_ratio = 0;          // distinct keys requested / key occurrences (1: no repeats);
                                        // NaN (printed n/a) when no layer's scheme counts them
  double final_loss = 0;
  std::int64_t refused_keys = 0;  // keys the dynamic tables could not insert (all ranks, the
                                  // timed iterations): their rows read as zeros
};

struct TrainingRun {
  RunMeasurements measurements;
  RunSummary summary;
  sim::EvictionResults eviction;  // the config's eviction section's figures; empty without one
  OnlineDumpResults online;       // solver.incremental_dump's dumps; empty without
  // solver.checkpoint's saves (lib/run/checkpoint.hpp), in order; empty without.
  std::vector<CheckpointRecord> checkpoints;
  // The first timed iteration run: a resumed run's checkpoint's iteration, else 0. The
  // measurements hold iterations first_iteration .. (their index 0 is first_iteration).
  std::int64_t first_iteration = 0;
  // A parameter-server run: what carried its protocol (rank 0's MessageChannel::transport_details,
  // the same on every rank); empty for the engine's runs.
  std::string transport;
};

// Checks what depends on the number of ranks (at least one sample per rank; every layer's scheme
// can run and its rows fit: check_layers_for_ranks over the config's slot_size_array). Throws
// InputError naming the field.
void check_config_for_ranks(const config::Config& config, int ranks);

// The error that ends a run whose loss is not finite (solver.non_finite_loss "stop"): both
// drivers check it, the engine's every iteration, the parameter server's at its boundaries.
std::string non_finite_loss_message(std::int64_t iteration, double loss, int rank);

// The schemes of a config's layers by name ("all2all_dense"; several joined by "+", in layer
// order, each once): the report's `scheme` parameter.
std::string scheme_names(const config::Config& config);

// Checks the environment a run reads (EMBSCALE_FAULT_INJECT). Throws InputError naming it.
void check_run_environment();

// InputError naming solver.max_iter when `source` holds fewer batches than warmup_iter + max_iter.
void check_source_holds(const config::Config& config, const BatchSource& source);

// The run-wide figures of `m` (its step_time and loss filled; every rank the same counter names).
// Collective over `comm`. `holds_rows`: whether this rank owns rows, so that its `lookups` count
// towards load_imbalance (every rank of the engine's schemes; the servers of a parameter-server
// run, whose trainers look nothing up).
RunSummary summarize_run(comm::Communicator& comm, std::int64_t global_batch, const RunMeasurements& m,
                         bool holds_rows);

// Asked by every rank at every iteration boundary, outside the timed region; collective. Returns
// the agreed stop signal (0: go on), e.g. comm::any_rank_stopping.
using StopCheck = std::function<int()>;

// Runs solver.warmup_iter untimed then solver.max_iter timed iterations on `source`'s batches
// (an InputError when the source holds fewer). Collective. Progress
// lines go to `progress` on rank 0 every solver.display iterations (null: silent), prefixed by
// `progress_prefix`. When `stop_check` (if given) returns a signal, every rank throws
// StopRequested at that boundary: the run is abandoned whole.
// A GPU run (config::runs_on_gpu) runs its layers on `devices` (made by the caller, who records
// the GPU in its report), or on devices it opens itself when null.
TrainingRun run_training(comm::Communicator& comm, const config::Config& config, BatchSource& source,
                         std::ostream* progress, const StopCheck& stop_check = {},
                         const std::string& progress_prefix = "", const RunDevices* devices = nullptr);

}  // namespace embscale::run
