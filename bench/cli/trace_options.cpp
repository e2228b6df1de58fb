#include "bench/cli/trace_options.hpp"

namespace embscale::cli {
namespace {

constexpr const char* kFormats = "norm, raw or embscale";

void add_input_flags(CLI::App& command, TraceInputOptions& in) {
  command.add_option("trace", in.path, "trace file (a Norm file list, a Norm or Raw data file, an embscale trace)")
      ->required();
  command.add_option("--format", in.format, std::string("input format: ") + kFormats +
                                                 " (Raw must be named; the others are detected)");
  command.add_option("--config", in.config_path,
                     "a config whose Data layer gives slot_size_array, label_dim and dense_dim (Raw needs them)");
  command.add_option("--slot-sizes", in.slot_sizes, "each slot's key space (HugeCTR's slot_size_array)")
      ->delimiter(',');
  command.add_option("--label-dim", in.label_dim, "labels per sample (Raw)");
  command.add_option("--dense-dim", in.dense_dim, "dense features per sample (Raw)");
  command.add_option("--key-type", in.key_type, "Norm keys: I32 (unsigned int) or I64 (long long), HugeCTR's input_key_type")
      ->capture_default_str();
  command.add_option("--max-nnz", in.max_nnz, "most keys per bag; more is an error (0: no limit)")->capture_default_str();
  command.add_flag("--float-label-dense", in.float_label_dense, "Raw: labels and dense features are floats");
}

void add_output_flags(CLI::App& command, TraceOutputOptions& out, const std::string& format_flag) {
  command.add_option("-o,--output", out.path, "the trace to write (written under a temporary name, then renamed)")
      ->required();
  command.add_option(format_flag, out.format, std::string("output format: ") + kFormats + " (default embscale)");
  command.add_option("--out-key-type", out.key_type, "keys written as I32 or I64 (Norm and embscale)")->capture_default_str();
  command.add_flag("--checksum", out.checksum, "Norm: write HugeCTR's checksum mode (check \"Sum\")");
  command.add_flag("--out-float-label-dense", out.float_label_dense, "Raw: write labels and dense features as floats");
}

}  // namespace

void add_trace_subcommands(CLI::App& app, TraceSubcommands& c) {
  c.trace = app.add_subcommand("trace", "Recorded workloads: generate from a config, statistics, format conversion");
  c.trace->require_subcommand(1);

  c.generate = c.trace->add_subcommand("generate", "Write a config's synthetic batches as a trace");
  c.generate->add_option("config", c.generate_config, "config JSON file (default: the embedded default)");
  c.generate->add_option("--set", c.generate_options.settings, "FIELD=VALUE: override a config field; repeatable");
  c.generate->add_option("--iterations", c.generate_options.iterations, "batches to write (default: solver.max_iter)");
  c.generate->add_option("--ranks", c.generate_options.ranks, "ranks for solver.batchsize_per_rank")
      ->capture_default_str()->check(CLI::Range(1, 1 << 24));
  c.generate->add_flag("-q,--quiet", c.generate_options.quiet, "no summary lines");
  add_output_flags(*c.generate, c.generate_options.output, "--format");

  c.stats = c.trace->add_subcommand(
      "stats", "Samples, keys, unique keys, top-key shares, fitted Zipf exponent and reuse distances of a trace");
  add_input_flags(*c.stats, c.stats_options.input);
  c.stats->add_flag("--json", c.stats_options.json, "print JSON instead of tables");
  c.stats->add_flag("--no-reuse", c.stats_options.no_reuse, "skip the reuse distances (faster, less memory)");
  c.stats->add_option("--max-samples", c.stats_options.max_samples, "read at most this many samples (0: all)")
      ->capture_default_str();

  c.convert = c.trace->add_subcommand("convert", "Rewrite a trace in another format");
  add_input_flags(*c.convert, c.convert_options.input);
  add_output_flags(*c.convert, c.convert_options.output, "--to");
}

int TraceSubcommands::run() {
  if (generate->parsed()) {
    if (!generate_config.empty()) generate_options.config_path = generate_config;
    return trace_generate_command(generate_options);
  }
  if (stats->parsed()) return trace_stats_command(stats_options);
  return trace_convert_command(convert_options);
}

}  // namespace embscale::cli
