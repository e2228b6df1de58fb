// Subcommands of the embscale CLI. Each returns the process exit code (0 ok, 1 failure,
// 2 bad input); errors it cannot handle itself propagate as embscale::Error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "report/compare.hpp"

namespace embscale::cli {

struct RunOptions {
  std::optional<std::string> config_path;  // none: the embedded default
  std::optional<std::string> output_path;  // none: results/runs/<UTC timestamp>.h5
  std::string command_line;
  bool quiet = false;                 // no progress lines
  bool embedding_only = false;        // run a config's embedding part, skipping Config::not_run
  std::string run_id = "run0";        // the run's group under /runs
  std::vector<std::string> settings;  // FIELD=VALUE overrides of the config (--set)
  // --resume-from: a checkpoint, or a directory of them (solver.checkpoint.resume_from, made
  // absolute: the working directory's, not the config's).
  std::optional<std::string> resume_from;
};

struct SweepOptions {
  std::string sweep_path;
  std::string output_path;  // the merged report; points go to <stem>.points/
  std::string command_line;
  bool resume = false;          // go on with the runs the manifest lacks
  bool embedding_only = false;  // as RunOptions::embedding_only, for every point
  bool dry_run = false;         // check every point and print the plan; run nothing
  bool quiet = false;
};

struct MergeOptions {
  std::vector<std::string> inputs;
  std::string output_path;
  std::string command_line;
};

struct ReportOptions {
  std::string report_path;
  std::optional<std::string> plot_directory;  // write PNGs there (results/plot_report.py)
};

struct CompareOptions {
  std::string base_path;
  std::string new_path;
  report::CompareOptions settings;
  std::vector<std::string> gate_names;  // --gate; empty: settings.gate's default (step)
  bool json = false;
};

// A trace to read: its path, its format where the file cannot say (Raw; Norm files are
// detected), and the HugeCTR fields its reader needs (from a config's Data layer or flags).
struct TraceInputOptions {
  std::string path;
  std::optional<std::string> format;       // "norm", "raw", "embscale"; none: detected
  std::optional<std::string> config_path;  // its Data layer: slot_size_array, label_dim, dense_dim
  std::vector<std::int64_t> slot_sizes;    // --slot-sizes (over the config's)
  std::optional<std::int32_t> label_dim;
  std::optional<std::int32_t> dense_dim;
  // Norm keys: HugeCTR's input_key_type, "I32" or "I64"; none: the config's, else detected.
  std::optional<std::string> key_type;
  std::int64_t max_nnz = 0;        // 0: no limit
  bool float_label_dense = false;  // Raw: HugeCTR's float_label_dense
};

struct TraceOutputOptions {
  std::string path;
  std::optional<std::string> format;  // none: "embscale"
  std::string key_type = "I64";
  bool checksum = false;           // Norm: HugeCTR's check "Sum"
  bool float_label_dense = false;  // Raw
};

struct TraceGenerateOptions {
  std::optional<std::string> config_path;  // none: the embedded default
  std::vector<std::string> settings;       // --set FIELD=VALUE
  std::optional<std::int64_t> iterations;  // none: solver.max_iter
  int ranks = 1;                           // for solver.batchsize_per_rank
  bool quiet = false;
  TraceOutputOptions output;
};

struct TraceStatsCommandOptions {
  TraceInputOptions input;
  bool json = false;
  bool no_reuse = false;         // skip reuse distances (a third of the time)
  std::int64_t max_samples = 0;  // 0: the whole trace
};

struct TraceConvertOptions {
  TraceInputOptions input;
  TraceOutputOptions output;
};

// Collective over MPI_COMM_WORLD (MPI is initialised by main).
int run_command(const RunOptions& options);
// Exit 2 for a config embscale runs only in part, unless `embedding_only` (as run).
int validate_command(const std::string& config_path, bool embedding_only, std::optional<int> ranks,
                     std::optional<int> ranks_per_node = std::nullopt);
int report_command(const ReportOptions& options);
// Collective over MPI_COMM_WORLD. Exit kExitStopped when a signal stopped it (resumable).
int sweep_command(const SweepOptions& options);
int merge_command(const MergeOptions& options);
// Exit 1 when a figure regressed significantly, else 0.
int compare_command(const CompareOptions& options);
// Serial: the global batches of a config's iterations written as a trace.
int trace_generate_command(const TraceGenerateOptions& options);
int trace_stats_command(const TraceStatsCommandOptions& options);
int trace_convert_command(const TraceConvertOptions& options);

}  // namespace embscale::cli
