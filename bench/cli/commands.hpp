// Subcommands of the embscale CLI. Each returns the process exit code (0 ok, 1 failure,
// 2 bad input); errors it cannot handle itself propagate as embscale::Error.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "report/compare.hpp"

namespace embscale::cli {

struct RunOptions {
  std::optional<std::string> config_path;  // none: the embedded default
  std::optional<std::string> output_path;  // none: results/runs/<UTC timestamp>.h5
  std::string command_line;
  bool quiet = false;                      // no progress lines
  std::string run_id = "run0";             // the run's group under /runs
  std::vector<std::string> settings;       // FIELD=VALUE overrides of the config (--set)
};

struct SweepOptions {
  std::string sweep_path;
  std::string output_path;                 // the merged report; points go to <stem>.points/
  std::string command_line;
  bool resume = false;                     // go on with the runs the manifest lacks
  bool dry_run = false;                    // check every point and print the plan; run nothing
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
  bool json = false;
};

// Collective over MPI_COMM_WORLD (MPI is initialised by main).
int run_command(const RunOptions& options);
int validate_command(const std::string& config_path);
int report_command(const ReportOptions& options);
// Collective over MPI_COMM_WORLD. Exit kExitStopped when a signal stopped it (resumable).
int sweep_command(const SweepOptions& options);
int merge_command(const MergeOptions& options);
// Exit 1 when a figure regressed significantly, else 0.
int compare_command(const CompareOptions& options);

}  // namespace embscale::cli
