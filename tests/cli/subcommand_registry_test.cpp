// The subcommand registry (bench/cli/subcommand_registry.hpp): every entry complete and unique,
// every command's help carrying its exit codes, and a parsed command line choosing exactly the
// subcommand it names (none falls through to another).
#include "bench/cli/subcommand_registry.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "core/error.hpp"
#include "core/stop_request.hpp"

namespace embscale::cli {
namespace {

std::vector<CLI::App*> nested_commands(CLI::App& command) {
  std::vector<CLI::App*> all;
  for (CLI::App* nested : command.get_subcommands([](CLI::App*) { return true; })) {
    all.push_back(nested);
    for (CLI::App* deeper : nested_commands(*nested)) all.push_back(deeper);
  }
  return all;
}

// The registered subcommands that `arguments` (without the program name) leaves parsed.
std::vector<std::string> parsed_subcommands(const std::vector<std::string>& arguments) {
  CLI::App app;
  app.require_subcommand(1);
  const auto defined = define_subcommands(app, {"embscale"});
  std::vector<std::string> reversed(arguments.rbegin(), arguments.rend());  // CLI11 takes them last first
  app.parse(reversed);
  std::vector<std::string> names;
  for (const auto& subcommand : defined)
    if (subcommand.command->parsed()) names.emplace_back(subcommand.entry->name);
  return names;
}

TEST(SubcommandRegistry, EveryEntryIsCompleteAndNamedOnce) {
  std::set<std::string> names;
  for (const Subcommand& entry : subcommands()) {
    const std::string name(entry.name);
    EXPECT_TRUE(names.insert(name).second) << name << " is registered twice";
    EXPECT_FALSE(name.empty());
    EXPECT_EQ(name.find_first_of(" -"), std::string::npos) << name << ": not a plain word";
    EXPECT_FALSE(entry.description.empty()) << name;
    EXPECT_NE(entry.define, nullptr) << name << " has no define function";
    // Codes ascending and unique; 0, 1 and 2 said for every subcommand (parse errors are 2).
    std::vector<int> codes;
    for (const ExitCode& exit : entry.exit_codes) {
      EXPECT_FALSE(exit.meaning.empty()) << name << " exit " << exit.code;
      EXPECT_TRUE(codes.empty() || exit.code > codes.back()) << name << ": exit codes out of order";
      codes.push_back(exit.code);
    }
    ASSERT_GE(codes.size(), 3u) << name;
    EXPECT_EQ(codes[0], 0) << name;
    EXPECT_EQ(codes[1], kExitFailure) << name;
    EXPECT_EQ(codes[2], kExitBadInput) << name;
  }
  // The programs that start MPI are exactly those that stop on a signal (kExitStopped): the MPI
  // programs run, sweep and collectives, and simulate (one process; its report is parallel HDF5's).
  for (const Subcommand& entry : subcommands()) {
    const bool stoppable = entry.exit_codes.back().code == kExitStopped;
    EXPECT_EQ(entry.launch != Launch::kSerial, stoppable) << entry.name;
    EXPECT_EQ(entry.launch == Launch::kMpi, entry.name == "run" || entry.name == "sweep" || entry.name == "collectives")
        << entry.name;
  }
}

TEST(SubcommandRegistry, DefinesEveryCommandWithARunFunctionAndExitCodesInItsHelp) {
  CLI::App app;
  app.footer(top_level_footer());  // as main() has it: CLI11 copies it into new subcommands
  const auto defined = define_subcommands(app, {"embscale test"});
  ASSERT_EQ(defined.size(), subcommands().size());
  for (std::size_t i = 0; i < defined.size(); ++i) {
    const DefinedSubcommand& subcommand = defined[i];
    EXPECT_EQ(subcommand.entry, &subcommands()[i]);
    EXPECT_EQ(subcommand.command->get_name(), subcommand.entry->name);
    EXPECT_TRUE(static_cast<bool>(subcommand.run)) << subcommand.entry->name << ": empty run function";
    // The command and every nested one (trace's) end their help with the exit codes.
    std::vector<CLI::App*> commands = nested_commands(*subcommand.command);
    commands.push_back(subcommand.command);
    for (CLI::App* command : commands) {
      const std::string help = command->help();
      EXPECT_NE(help.find("Exit codes:\n  0  "), std::string::npos) << command->get_name() << ":\n" << help;
      EXPECT_NE(help.find("\n  2  bad input"), std::string::npos) << command->get_name() << ":\n" << help;
    }
  }
}

TEST(SubcommandRegistry, HelpSaysHowToLaunchAndWhatEachCodeMeans) {
  const auto find = [](std::string_view name) -> const Subcommand& {
    for (const Subcommand& entry : subcommands())
      if (entry.name == name) return entry;
    throw std::runtime_error("no subcommand " + std::string(name));
  };
  const std::string run = help_footer(find("run"));
  EXPECT_EQ(run.rfind("An MPI program: launch it as `mpiexec -n N embscale run ...`", 0), 0u) << run;
  EXPECT_NE(run.find("\n  0  done"), std::string::npos) << run;
  EXPECT_NE(run.find("\n  1  failure"), std::string::npos) << run;
  EXPECT_NE(run.find("\n  3  stopped by SIGTERM/SIGUSR1"), std::string::npos) << run;
  const std::string compare = help_footer(find("compare"));
  EXPECT_EQ(compare.rfind("Serial: ", 0), 0u) << compare;
  EXPECT_NE(compare.find("\n  1  a regression"), std::string::npos) << compare;
  const std::string simulate = help_footer(find("simulate"));
  EXPECT_EQ(simulate.rfind("One process: run it without a launcher", 0), 0u) << simulate;
  const std::string top = top_level_footer();
  EXPECT_NE(top.find("MPI programs (launch with mpiexec -n N or srun -n N): run, sweep, collectives."),
            std::string::npos)
      << top;
  EXPECT_NE(top.find("One process (no launcher): simulate."), std::string::npos) << top;
}

TEST(SubcommandRegistry, AParsedCommandLineChoosesExactlyTheNamedSubcommand) {
  EXPECT_EQ(parsed_subcommands({"validate", "c.json"}), std::vector<std::string>{"validate"});
  EXPECT_EQ(parsed_subcommands({"report", "r.h5"}), std::vector<std::string>{"report"});
  EXPECT_EQ(parsed_subcommands({"merge", "a.h5", "b.h5", "-o", "m.h5"}), std::vector<std::string>{"merge"});
  EXPECT_EQ(parsed_subcommands({"compare", "a.h5", "b.h5"}), std::vector<std::string>{"compare"});
  EXPECT_EQ(parsed_subcommands({"trace", "stats", "t.emb"}), std::vector<std::string>{"trace"});
  EXPECT_EQ(parsed_subcommands({"run", "--id", "x"}), std::vector<std::string>{"run"});
  EXPECT_EQ(parsed_subcommands({"sweep", "s.json", "-o", "s.h5"}), std::vector<std::string>{"sweep"});
  // No subcommand, or a word that is none, is a parse error (main exits 2), never a default.
  EXPECT_THROW(parsed_subcommands({}), CLI::RequiredError);
  EXPECT_THROW(parsed_subcommands({"reprot", "r.h5"}), CLI::ParseError);
}

}  // namespace
}  // namespace embscale::cli
