#include "bench/cli/subcommand_registry.hpp"

#include "core/error.hpp"
#include "core/stop_request.hpp"

namespace embscale::cli {
namespace {

void set_footer_where_unset(CLI::App& command, const std::string& footer) {
  if (command.get_footer().empty()) command.footer(footer);
  for (CLI::App* nested : command.get_subcommands([](CLI::App*) { return true; }))
    set_footer_where_unset(*nested, footer);
}

}  // namespace

// Bad arguments (an unknown flag, a missing positional) exit kExitBadInput for every subcommand:
// main() maps CLI11's parse errors to it. Each meaning below says what else lands there.
const std::vector<Subcommand>& subcommands() {
  static const std::vector<Subcommand> registry{
      {"run",
       "Run a config (no CONFIG: the embedded default) and write an HDF5 report",
       Launch::kMpi,
       {{0, "done (report written)"},
        {kExitFailure, "failure (a rank failed, an I/O error; no report)"},
        {kExitBadInput, "bad input (arguments, config, --set, output path; nothing ran)"},
        {kExitStopped, "stopped by SIGTERM/SIGUSR1 at an iteration boundary (no report)"}},
       define_run},
      {"sweep",
       "Run every point of a sweep file (a grid or a list over config fields), then merge the reports into one",
       Launch::kMpi,
       {{0, "done (merged report written)"},
        {kExitFailure, "failure (a rank failed, an I/O error)"},
        {kExitBadInput, "bad input (arguments, sweep file, a point's config; nothing ran)"},
        {kExitStopped, "stopped by SIGTERM/SIGUSR1 (finished runs kept: resume with --resume)"}},
       define_sweep},
      {"collectives",
       "Time the Communicator's collectives over a size sweep (nccl-tests' flags) against bare MPI, check every "
       "result, and alltoallv with an embedding layer's skewed counts",
       Launch::kMpi,
       {{0, "done (report written, every result correct)"},
        {kExitFailure, "wrong elements in a result (the report is written; stderr says where), or a failure"},
        {kExitBadInput,
         "bad input (a flag: sizes, factor, type, op, root, counts; the skewed counts' config; nothing ran)"},
        {kExitStopped, "stopped by SIGTERM/SIGUSR1 between cases (no report)"}},
       define_collectives},
      {"merge",
       "Merge reports into one (run ids must be unique across them)",
       Launch::kSerial,
       {{0, "merged"},
        {kExitFailure, "failure (an I/O error while writing)"},
        {kExitBadInput,
         "bad input (arguments, an input that is not a report, a run id in two inputs, "
         "different /summary columns, an output that cannot be created)"}},
       define_merge},
      {"validate",
       "Check a config file and print what it runs",
       Launch::kSerial,
       {{0, "valid"},
        {kExitFailure, "failure (an internal error)"},
        {kExitBadInput, "bad input: an invalid config (the message names the file and the field), or bad arguments"}},
       define_validate},
      {"plan",
       "Plan a config's \"auto\" layers for N ranks (each table's scheme and placement, from the key skew), print "
       "the plan and write it as a config run accepts",
       Launch::kSerial,
       {{0, "planned (the plan printed and written)"},
        {kExitFailure, "failure (an I/O error while writing)"},
        {kExitBadInput,
         "bad input (arguments, config; no layer to plan; no plan fits the memory per rank: the "
         "message names the rank, the shortfall and the largest table there)"}},
       define_plan},
      {"simulate",
       "Count a config's key traffic for N ranks in one process (exactly what a run on N ranks counts, per rank "
       "and link class) and predict its step from the cost model; writes a run report of N ranks",
       Launch::kOneProcess,
       {{0, "simulated (report written)"},
        {kExitFailure, "failure (an I/O error while writing)"},
        {kExitBadInput,
         "bad input (arguments, config; a layer whose scheme is not simulated; launched on more than one rank)"},
        {kExitStopped, "stopped by SIGTERM/SIGUSR1 at an iteration boundary (no report)"}},
       define_simulate},
      {"report",
       "Print the summary of an existing report, and plot it",
       Launch::kSerial,
       {{0, "printed (and plotted)"},
        {kExitFailure, "failure (the plot script failed or could not start)"},
        {kExitBadInput, "bad input (arguments, not a report, a plot directory that cannot be created)"}},
       define_report},
      {"compare",
       "Compare two reports: per-figure change, significance, exit 1 on a regression",
       Launch::kSerial,
       {{0, "no regression"},
        {kExitFailure, "a regression (a gated figure significantly worse), or a failure (the message says which)"},
        {kExitBadInput, "bad input (arguments, a file that is not a report, reports that cannot be paired)"}},
       define_compare},
      {"trace",
       "Recorded workloads: generate from a config, statistics, format conversion",
       Launch::kSerial,
       {{0, "done"},
        {kExitFailure, "failure (an I/O error while writing)"},
        {kExitBadInput,
         "bad input (arguments, an unreadable or malformed trace: the message names the file "
         "and the byte offset)"}},
       define_trace},
  };
  return registry;
}

std::string help_footer(const Subcommand& subcommand) {
  const std::string name(subcommand.name);
  std::string footer;
  switch (subcommand.launch) {
    case Launch::kMpi:
      footer = "An MPI program: launch it as `mpiexec -n N embscale " + name + " ...` (Slurm: `srun -n N embscale " +
               name + " ...`); without a launcher it runs on one rank.\n";
      break;
    case Launch::kOneProcess:
      footer =
          "One process: run it without a launcher (it starts MPI for its report alone; a launch on several "
          "ranks is refused).\n";
      break;
    case Launch::kSerial: footer = "Serial: it never initialises MPI; run it without a launcher.\n"; break;
  }
  footer += "Exit codes:";
  for (const ExitCode& exit : subcommand.exit_codes)
    footer += "\n  " + std::to_string(exit.code) + "  " + std::string(exit.meaning);
  return footer;
}

std::string top_level_footer() {
  std::string mpi, one, serial;
  for (const Subcommand& entry : subcommands()) {
    std::string& list = entry.launch == Launch::kMpi ? mpi : entry.launch == Launch::kOneProcess ? one : serial;
    list += (list.empty() ? "" : ", ") + std::string(entry.name);
  }
  return "MPI programs (launch with mpiexec -n N or srun -n N): " + mpi + ". One process (no launcher): " + one +
         ". Serial: " + serial +
         ".\nExit codes: 0 ok, 1 failure, 2 bad input, 3 stopped by SIGTERM/SIGUSR1; `embscale SUBCOMMAND --help` "
         "says what each means there (compare: 1 = a regression).";
}

std::vector<DefinedSubcommand> define_subcommands(CLI::App& app, const Invocation& invocation) {
  std::vector<DefinedSubcommand> defined;
  for (const Subcommand& entry : subcommands()) {
    CLI::App* command = app.add_subcommand(std::string(entry.name), std::string(entry.description));
    command->footer(std::string());  // CLI11 copies the parent's footer into a new subcommand
    RunFunction run = entry.define(*command, invocation);
    set_footer_where_unset(*command, help_footer(entry));
    defined.push_back({&entry, command, std::move(run)});
  }
  return defined;
}

}  // namespace embscale::cli
