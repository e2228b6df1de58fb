// The `embscale trace` subcommand tree (generate, stats, convert) and its flags: three
// subcommands share the input and output flags. The bodies are in trace_command.cpp.
#include <memory>
#include <string>

#include "bench/cli/commands.hpp"
#include "bench/cli/subcommand_registry.hpp"
#include "core/error.hpp"

namespace embscale::cli {
namespace {

constexpr const char* kFormats = "norm, raw or embscale";

void add_input_flags(CLI::App& command, TraceInputOptions& in) {
  command.add_option("trace", in.path, "trace file (a Norm file list, a Norm or Raw data file, an embscale trace)")
      ->required();
  command.add_option("--format", in.format,
                     std::string("input format: ") + kFormats + " (Raw must be named; the others are detected)");
  command.add_option("--config", in.config_path,
                     "a config whose Data layer gives slot_size_array, label_dim and dense_dim (Raw needs them)");
  command.add_option("--slot-sizes", in.slot_sizes, "each slot's key space (HugeCTR's slot_size_array)")
      ->delimiter(',');
  command.add_option("--label-dim", in.label_dim, "labels per sample (Raw)");
  command.add_option("--dense-dim", in.dense_dim, "dense features per sample (Raw)");
  command.add_option(
      "--key-type", in.key_type,
      "Norm keys: I32 (unsigned int) or I64 (long long), HugeCTR's input_key_type (default: the "
      "config's, else detected from the first samples; I32, HugeCTR's default, when both widths read them)");
  command
      .add_option("--max-nnz", in.max_nnz,
                  "most keys per bag; more is an error (0: the config's sparse max_nnz, else no limit)")
      ->capture_default_str();
  command.add_flag("--float-label-dense", in.float_label_dense, "Raw: labels and dense features are floats");
}

void add_output_flags(CLI::App& command, TraceOutputOptions& out, const std::string& format_flag) {
  command.add_option("-o,--output", out.path, "the trace to write (written under a temporary name, then renamed)")
      ->required();
  command.add_option(format_flag, out.format, std::string("output format: ") + kFormats + " (default embscale)");
  command.add_option("--out-key-type", out.key_type, "keys written as I32 or I64 (Norm and embscale)")
      ->capture_default_str();
  command.add_flag("--checksum", out.checksum, "Norm: write HugeCTR's checksum mode (check \"Sum\")");
  command.add_flag("--out-float-label-dense", out.float_label_dense, "Raw: write labels and dense features as floats");
}

}  // namespace

// `embscale trace` (subcommand_registry.hpp): three nested subcommands; the run function runs the
// one that was parsed (trace requires one).
RunFunction define_trace(CLI::App& trace, const Invocation&) {
  struct Parsed {
    TraceGenerateOptions generate;
    std::string generate_config;  // CLI11 binds plain strings; empty: the embedded default
    TraceStatsCommandOptions stats;
    TraceConvertOptions convert;
  };
  auto parsed = std::make_shared<Parsed>();
  trace.require_subcommand(1);

  CLI::App* generate = trace.add_subcommand("generate", "Write a config's synthetic batches as a trace");
  generate->add_option("config", parsed->generate_config, "config JSON file (default: the embedded default)");
  generate->add_option("--set", parsed->generate.settings, "FIELD=VALUE: override a config field; repeatable");
  generate->add_option("--iterations", parsed->generate.iterations, "batches to write (default: solver.max_iter)");
  generate->add_option("--ranks", parsed->generate.ranks, "ranks for solver.batchsize_per_rank")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  generate->add_flag("-q,--quiet", parsed->generate.quiet, "no summary lines");
  add_output_flags(*generate, parsed->generate.output, "--format");

  CLI::App* stats = trace.add_subcommand(
      "stats", "Samples, keys, unique keys, top-key shares, fitted Zipf exponent and reuse distances of a trace");
  add_input_flags(*stats, parsed->stats.input);
  stats->add_flag("--json", parsed->stats.json, "print JSON instead of tables");
  stats->add_flag("--no-reuse", parsed->stats.no_reuse, "skip the reuse distances (faster, less memory)");
  stats->add_option("--max-samples", parsed->stats.max_samples, "read at most this many samples (0: all)")
      ->capture_default_str();

  CLI::App* convert = trace.add_subcommand("convert", "Rewrite a trace in another format");
  add_input_flags(*convert, parsed->convert.input);
  add_output_flags(*convert, parsed->convert.output, "--to");

  return [parsed, generate, stats, convert]() -> int {
    if (generate->parsed()) {
      if (!parsed->generate_config.empty()) parsed->generate.config_path = parsed->generate_config;
      return trace_generate_command(parsed->generate);
    }
    if (stats->parsed()) return trace_stats_command(parsed->stats);
    if (convert->parsed()) return trace_convert_command(parsed->convert);
    throw Error("trace: no trace subcommand was parsed (CLI11 requires one)");
  };
}

}  // namespace embscale::cli
