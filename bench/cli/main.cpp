// embscale: one binary, subcommands (DESIGN.md "The seams": a subcommand), each registered in subcommand_registry.cpp
// with its launch kind: MPI programs run inside MPI_Init/MPI_Finalize, serial ones never
// initialise MPI.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <string>
#include <vector>

#include "bench/cli/subcommand_registry.hpp"
#include "comm/failure.hpp"
#include "comm/mpi_session.hpp"
#include "config/json_reader.hpp"
#include "core/build_info.hpp"
#include "core/error.hpp"
#include "core/stop_request.hpp"

namespace {

std::string join_arguments(int argc, char** argv) {
  std::string line;
  for (int i = 0; i < argc; ++i) line += (i ? " " : "") + std::string(argv[i]);
  return line;
}

// Serial subcommands: print the error once and return its exit code.
int run_serial(const std::function<int()>& command) {
  try {
    return command();
  } catch (const embscale::Error& e) {
    std::fprintf(stderr, "embscale: error: %s\n", e.what());
    return e.exit_code();
  }
}

// The MPI subcommand: agreed failures exit cleanly with their code; anything else aborts all ranks.
// `one_process`: a subcommand that runs alone (Launch::kOneProcess) has no other rank to end, so
// an error is said and MPI finalised as on success (no MPI_Abort and its banner).
int run_mpi(int argc, char** argv, const std::function<int()>& command, bool one_process) {
  const embscale::comm::MpiSession mpi(argc, argv);
  int code = 0;
  try {
    code = command();
  } catch (const embscale::comm::AgreedFailure& failure) {
    code = failure.exit_code;
  } catch (const embscale::StopRequested& stop) {
    // Agreed by every rank (comm::any_rank_stopping): a clean exit, said once.
    if (mpi.world_rank() == 0) std::fprintf(stderr, "embscale: %s\n", stop.what());
    code = stop.exit_code();
  } catch (const embscale::Error& e) {
    if (one_process) {
      std::fprintf(stderr, "embscale: error: %s\n", e.what());
      return e.exit_code();
    }
    embscale::comm::abort_all_ranks(e.exit_code(), e.what());
  } catch (const std::exception& e) {
    embscale::comm::abort_all_ranks(embscale::kExitFailure, e.what());
  }
  return code;
}

// An unknown word where a subcommand belongs reaches CLI11 as an unexpected argument, which it
// reports as "A subcommand is required" or "The following arguments were not expected"; say what
// the word is and what exists instead.
int unknown_argument(const std::string& word) {
  std::string known;
  std::vector<std::string> names;
  for (const auto& entry : embscale::cli::subcommands()) {
    known += (known.empty() ? "" : ", ") + std::string(entry.name);
    names.emplace_back(entry.name);
  }
  const bool option = word.rfind('-', 0) == 0;
  // A typo of a subcommand ("reprot") gets the nearest one: "...; did you mean "report"?".
  const std::string suggestion = option ? "" : embscale::config::did_you_mean(word, names);
  std::fprintf(stderr, "embscale: unknown %s \"%s\"%s (subcommands: %s; see embscale --help)\n",
               option ? "option" : "subcommand", word.c_str(), suggestion.c_str(), known.c_str());
  return embscale::kExitBadInput;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"embscale: measure and predict distributed embedding tables at scale"};
  app.require_subcommand(1);
  app.set_version_flag("--version",
                       std::string(embscale::build_info::version()) + " (" + embscale::build_info::git_sha() + ")");
  app.footer(embscale::cli::top_level_footer());
  const auto defined = embscale::cli::define_subcommands(app, {join_arguments(argc, argv)});

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (const auto extras = app.remaining(); app.get_subcommands().empty() && !extras.empty())
      return unknown_argument(extras.front());
    const int code = app.exit(e);
    return code == 0 ? 0 : embscale::kExitBadInput;
  }

  // require_subcommand(1): exactly one top-level subcommand was parsed.
  for (const auto& subcommand : defined) {
    if (!subcommand.command->parsed()) continue;
    const auto launch = subcommand.entry->launch;
    if (launch != embscale::cli::Launch::kSerial)
      return run_mpi(argc, argv, subcommand.run, launch == embscale::cli::Launch::kOneProcess);
    return run_serial(subcommand.run);
  }
  std::fprintf(stderr, "embscale: internal error: no registered subcommand was parsed\n");
  return embscale::kExitFailure;
}
