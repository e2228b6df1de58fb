// The `embscale trace` subcommand tree (generate, stats, convert) and its flags, kept out of
// main.cpp: three subcommands share the input and output flags.
#pragma once

#include <CLI/CLI.hpp>

#include "bench/cli/commands.hpp"

namespace embscale::cli {

struct TraceSubcommands {
  CLI::App* trace = nullptr;
  CLI::App* generate = nullptr;
  CLI::App* stats = nullptr;
  CLI::App* convert = nullptr;
  TraceGenerateOptions generate_options;
  TraceStatsCommandOptions stats_options;
  TraceConvertOptions convert_options;
  std::string generate_config;  // CLI11 binds plain strings; empty: the embedded default

  bool chosen() const { return trace != nullptr && trace->parsed(); }
  // Runs the chosen subcommand (after parsing).
  int run();
};

void add_trace_subcommands(CLI::App& app, TraceSubcommands& commands);

}  // namespace embscale::cli
