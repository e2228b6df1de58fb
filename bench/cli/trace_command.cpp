// `embscale trace generate | stats | convert`: recorded workloads (workloads/trace/) from configs,
// their statistics (workloads/trace_stats.hpp), and conversion between formats. Serial: one
// process reads or writes the whole trace.
#include <iostream>
#include <optional>

#include "bench/cli/commands.hpp"
#include "config/config.hpp"
#include "config/sweep_spec.hpp"
#include "core/error.hpp"
#include "workloads/batch_source_factory.hpp"
#include "workloads/synthetic.hpp"
#include "workloads/trace/trace.hpp"
#include "workloads/trace_stats.hpp"
#include "workloads/trace_stats_report.hpp"
#include "workloads/workload_description.hpp"

namespace embscale::cli {
namespace {

// Samples a reader hands over per read: bounds memory whatever the trace's size.
constexpr std::int64_t kReadChunk = 65536;

config::Config load_config(const std::optional<std::string>& path, const std::vector<std::string>& settings) {
  const std::string text = path ? config::read_config_text(*path) : config::default_config_text();
  auto config = config::parse_config_with_settings(text, path.value_or("<embedded default>"), settings);
  if (path) config.directory = config::config_directory(*path);
  return config;
}

// What the reader must be told for files that do not say it themselves (Raw: everything; Norm:
// the key width, else detected; both: the key spaces to check keys against). A config's Data
// layer gives the HugeCTR fields; explicit flags win over it.
trace::TraceReadOptions read_options(const TraceInputOptions& in) {
  trace::TraceReadOptions options;
  if (in.config_path) options = workloads::trace_read_options(load_config(in.config_path, {}));
  if (!in.slot_sizes.empty()) {
    options.slot_sizes = in.slot_sizes;
    options.num_slots = static_cast<std::int32_t>(in.slot_sizes.size());
  }
  if (in.label_dim) options.label_dim = *in.label_dim;
  if (in.dense_dim) options.dense_dim = *in.dense_dim;
  if (in.key_type) options.norm_key_width = trace::parse_key_width(*in.key_type, "--key-type");
  if (in.max_nnz > 0) options.max_nnz = in.max_nnz;
  if (in.float_label_dense) options.raw_float_label_dense = true;
  return options;
}

// Opens the trace; what the reader assumed (a detected Norm key width) goes to stderr, so that
// stdout stays the command's output (`stats --json`).
std::unique_ptr<trace::TraceReader> open_input(const TraceInputOptions& in) {
  const auto options = read_options(in);
  auto reader = in.format ? trace::open_trace_reader(in.path, trace::parse_trace_format(*in.format), options)
                          : trace::open_trace_reader(in.path, options);
  for (const auto& note : reader->notes()) std::cerr << "embscale trace: note: " << note << '\n';
  return reader;
}

trace::TraceWriteOptions write_options(const TraceOutputOptions& out) {
  trace::TraceWriteOptions options;
  options.key_width = trace::parse_key_width(out.key_type, "--out-key-type");
  options.norm_checksum = out.checksum;
  options.raw_float_label_dense = out.float_label_dense;
  return options;
}

}  // namespace

int trace_generate_command(const TraceGenerateOptions& options) {
  auto config = load_config(options.config_path, options.settings);
  if (config.data.format != config::DataFormat::kSynthetic)
    throw InputError(options.config_path.value_or("<embedded default>") + ": layers[" + config.data.name +
                     "].format: trace generate writes generated batches, expected \"Synthetic\", got \"" +
                     config::to_string(config.data.format) + "\" (to rewrite a trace, use `embscale trace convert`)");
  config::resolve_batch_for_ranks(config, options.ranks);
  const std::int64_t iterations = options.iterations.value_or(config.solver.max_iter);
  if (iterations < 1) throw InputError("--iterations: expected an integer >= 1, got " + std::to_string(iterations));
  const auto format = trace::parse_trace_format(options.output.format.value_or("embscale"));
  trace::TraceShape shape;
  shape.label_dim = config.data.label_dim;
  shape.dense_dim = config.data.dense_dim;
  shape.num_slots = config.data.slot_num;
  shape.slot_sizes = config.data.slot_size_array;
  auto writer = trace::open_trace_writer(options.output.path, format, shape, write_options(options.output));
  const workloads::SyntheticGenerator generator(config.data, config.solver.seed, config.solver.batchsize);
  if (!options.quiet) {
    std::cout << "embscale trace generate: " << iterations << " iterations of " << config.solver.batchsize
              << " samples, seed " << config.solver.seed << ", into " << options.output.path << " ("
              << trace::to_string(format) << ")\n";
    workloads::print_synthetic_slots(std::cout, config.data);
  }
  for (std::int64_t it = 0; it < iterations; ++it) writer->write(generator.generate(it, 0, 1));
  writer->close();
  if (!options.quiet)
    std::cout << "wrote " << writer->samples_written() << " samples to " << options.output.path << '\n';
  return 0;
}

int trace_stats_command(const TraceStatsCommandOptions& options) {
  auto reader = open_input(options.input);
  workloads::TraceStatsOptions stats_options;
  stats_options.slot_size_array = reader->shape().slot_sizes;
  stats_options.reuse_distances = !options.no_reuse;
  workloads::TraceStatsCollector collector(stats_options);
  Batch batch;
  std::int64_t left = options.max_samples > 0 ? options.max_samples : -1;
  while (left != 0) {
    const std::int64_t want = left < 0 ? kReadChunk : std::min(left, kReadChunk);
    const std::int64_t got = reader->read(want, batch);
    if (got == 0) break;
    collector.add(batch);
    if (left > 0) left -= got;
  }
  const auto stats = collector.finish();
  if (options.json) {
    std::cout << workloads::trace_stats_json(stats).dump(2) << '\n';
  } else {
    std::cout << options.input.path << ": " << stats.total.records << " samples, " << reader->shape().num_slots
              << " slots\n"
              << workloads::format_trace_stats(stats);
  }
  return 0;
}

int trace_convert_command(const TraceConvertOptions& options) {
  auto reader = open_input(options.input);
  const auto format = trace::parse_trace_format(options.output.format.value_or("embscale"));
  auto writer = trace::open_trace_writer(options.output.path, format, reader->shape(), write_options(options.output));
  Batch batch;
  while (reader->read(kReadChunk, batch) > 0) writer->write(batch);
  writer->close();
  std::cout << "converted " << writer->samples_written() << " samples of " << options.input.path << " into "
            << options.output.path << " (" << trace::to_string(format) << ")\n";
  return 0;
}

}  // namespace embscale::cli
