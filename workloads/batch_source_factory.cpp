#include "workloads/batch_source_factory.hpp"

#include <utility>

#include "core/error.hpp"
#include "workloads/synthetic.hpp"
#include "workloads/trace_batch_source.hpp"

namespace embscale::workloads {
namespace {

trace::TraceFormat trace_format(config::DataFormat format) {
  switch (format) {
    case config::DataFormat::kNorm: return trace::TraceFormat::kNorm;
    case config::DataFormat::kRaw: return trace::TraceFormat::kRaw;
    case config::DataFormat::kEmbscale: return trace::TraceFormat::kEmbscale;
    case config::DataFormat::kSynthetic: break;
  }
  throw Error("the Synthetic format has no trace");
}

}  // namespace

trace::TraceReadOptions trace_read_options(const config::Config& config) {
  const auto& data = config.data;
  trace::TraceReadOptions options;
  options.label_dim = data.label_dim;
  options.dense_dim = data.dense_dim;
  options.num_slots = data.slot_num;
  options.slot_sizes = data.slot_size_array;
  if (!config.solver.input_key_type.empty())
    options.norm_key_width = trace::parse_key_width(config.solver.input_key_type, "solver.input_key_type");
  options.norm_checksum = data.check_sum;
  options.max_nnz = data.max_nnz;
  options.raw_float_label_dense = data.float_label_dense;
  return options;
}

std::unique_ptr<BatchSource> make_batch_source(const config::Config& config) {
  const auto& solver = config.solver;
  std::unique_ptr<BatchSource> source;
  if (config.data.format == config::DataFormat::kSynthetic) {
    source = std::make_unique<SyntheticGenerator>(config.data, solver.seed, solver.batchsize);
  } else {
    TraceSourceOptions options;
    options.path = config::data_source_path(config);
    options.format = trace_format(config.data.format);
    options.read = trace_read_options(config);
    options.global_batch = solver.batchsize;
    options.warmup_iterations = solver.warmup_iter;
    options.sample_limit = config.data.num_samples;
    source = std::make_unique<TraceBatchSource>(std::move(options));
  }
  check_iterations_fit(*source, solver);
  return source;
}

std::int64_t run_samples(const config::Config& config) {
  return (config.solver.warmup_iter + config.solver.max_iter) * config.solver.batchsize;
}

std::int64_t check_run_samples(const config::Config& config) {
  if (config.data.format == config::DataFormat::kSynthetic || !config.data.check_samples_at_start) return 0;
  const auto source = make_batch_source(config);
  // Warm-up iteration -1 - i reads trace batch i, timed iteration t batch W + t
  // (trace_batch_source.hpp): in this order the trace is read front to back, once.
  for (std::int64_t i = 0; i < config.solver.warmup_iter; ++i) (void)source->next_batch(-1 - i, 0, 1);
  for (std::int64_t t = 0; t < config.solver.max_iter; ++t) (void)source->next_batch(t, 0, 1);
  return run_samples(config);
}

void check_iterations_fit(const BatchSource& source, const config::Solver& solver) {
  const std::int64_t available = source.iterations_available(solver.batchsize);
  if (available == BatchSource::kUnbounded || solver.warmup_iter + solver.max_iter <= available) return;
  const std::int64_t timed = available - solver.warmup_iter;  // what max_iter could be
  // The source's description last: it may carry notes of its own ("; ..."), which must not split
  // the sentence.
  throw InputError(
      "solver.max_iter: " + std::to_string(solver.warmup_iter) + " warm-up + " + std::to_string(solver.max_iter) +
      " timed iterations of " + std::to_string(solver.batchsize) + " samples (solver.batchsize) need " +
      std::to_string(solver.warmup_iter + solver.max_iter) + " batches, but the data holds " +
      std::to_string(available) + " whole batches: " +
      (timed > 0 ? "set max_iter to at most " + std::to_string(timed) + ", or lower warmup_iter or the batch size"
                 : std::string("lower the batch size or warmup_iter")) +
      ". The data: " + source.describe());
}

}  // namespace embscale::workloads
