// The embscale subcommands, each declared once: its name, whether it is an MPI program or serial,
// its exit codes, and a define function that adds its CLI11 options and returns its run function.
//
// main.cpp adds every registered subcommand to one CLI::App, parses, and runs the one that was
// parsed under its launch kind (MPI initialised only for an MPI program). Nothing dispatches by
// position or falls back to a default: a subcommand runs only when its own CLI::App was parsed.
//
// A new subcommand is one file (its body and, at its end, its define function), a declaration
// below, and one line in subcommands() (subcommand_registry.cpp).
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace embscale::cli {

// How main() runs a subcommand.
//   kMpi:    main initialises MPI around it; launched with mpiexec or srun (without a launcher it
//            runs as a single rank). Collective failures and stops are agreed over all ranks.
//   kSerial: MPI is never initialised, so it runs anywhere (a login node, a laptop) unlaunched.
//   kOneProcess: main initialises MPI around it (it writes a parallel HDF5 report) but it runs as
//            one process, never under a launcher (a launch on several ranks is its bad input).
enum class Launch { kSerial, kMpi, kOneProcess };

// What a run function may need beyond its own options; known before the options are defined.
struct Invocation {
  std::string command_line;  // argv joined by spaces: recorded in the reports a run writes
};

// Runs a parsed subcommand and returns its exit code; errors it cannot handle propagate as
// embscale::Error (main turns them into the error's exit code).
using RunFunction = std::function<int()>;

// Adds the subcommand's positional arguments and flags to `command` (already created with the
// registered name and description) and returns the run function, which owns the variables the
// options parse into. Called once, before parsing; the run function at most once, after it.
using DefineFunction = RunFunction (*)(CLI::App& command, const Invocation& invocation);

struct ExitCode {
  int code;
  std::string_view meaning;  // "bad input (the message names the field)"
};

struct Subcommand {
  std::string_view name;
  std::string_view description;  // one line, listed by `embscale --help`
  Launch launch;
  std::vector<ExitCode> exit_codes;  // ascending; every subcommand lists 0, 1 and 2 at least
  DefineFunction define;
};

// Every subcommand, in the order `embscale --help` lists them. Names are unique.
const std::vector<Subcommand>& subcommands();

// "An MPI program: ..." or "Serial: ..." and "Exit codes: 0 ..., 1 ..." for `<name> --help`.
std::string help_footer(const Subcommand& subcommand);
// For `embscale --help`: which subcommands are MPI programs, and the exit codes they share.
std::string top_level_footer();

struct DefinedSubcommand {
  const Subcommand* entry;
  CLI::App* command;  // owned by the app
  RunFunction run;
};

// Adds every registered subcommand to `app` with its options and footer (nested subcommands,
// such as trace's, get their parent's footer unless they set their own), in registry order.
std::vector<DefinedSubcommand> define_subcommands(CLI::App& app, const Invocation& invocation);

// The define functions, each at the end of its subcommand's file.
RunFunction define_run(CLI::App& command, const Invocation& invocation);
RunFunction define_sweep(CLI::App& command, const Invocation& invocation);
RunFunction define_collectives(CLI::App& command, const Invocation& invocation);
RunFunction define_merge(CLI::App& command, const Invocation& invocation);
RunFunction define_validate(CLI::App& command, const Invocation& invocation);
RunFunction define_plan(CLI::App& command, const Invocation& invocation);
RunFunction define_simulate(CLI::App& command, const Invocation& invocation);
RunFunction define_report(CLI::App& command, const Invocation& invocation);
RunFunction define_compare(CLI::App& command, const Invocation& invocation);
RunFunction define_trace(CLI::App& command, const Invocation& invocation);  // trace_options.cpp

}  // namespace embscale::cli
