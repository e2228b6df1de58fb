#include "workloads/trace_batch_source.hpp"

#include <algorithm>
#include <utility>

#include "core/error.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::workloads {
namespace {

// Samples a Norm reader parses per read while skipping other ranks' samples: bounds the memory
// of the dropped batch whatever the global batch.
constexpr std::int64_t kSkipChunk = 4096;

}  // namespace

TraceBatchSource::TraceBatchSource(TraceSourceOptions options)
    : options_(std::move(options)), reader_(trace::open_trace_reader(options_.path, options_.format, options_.read)) {
  EMBSCALE_EXPECTS(options_.global_batch >= 1, "a global batch of at least one sample");
  EMBSCALE_EXPECTS(options_.warmup_iterations >= 0 && options_.sample_limit >= 0, "counts are nonnegative");
  const std::int64_t held = reader_->shape().num_samples;
  if (options_.sample_limit > held)
    throw InputError("num_samples: " + std::to_string(options_.sample_limit) + " samples asked for, but the trace " +
                     options_.path.string() + " holds " + std::to_string(held));
  samples_ = options_.sample_limit > 0 ? options_.sample_limit : held;
}

std::int64_t TraceBatchSource::trace_batch(std::int64_t iteration) const {
  if (iteration >= 0) return options_.warmup_iterations + iteration;
  EMBSCALE_EXPECTS(-1 - iteration < options_.warmup_iterations,
                   "warm-up iteration " + std::to_string(iteration) + " beyond the " +
                       std::to_string(options_.warmup_iterations) +
                       " warm-up iterations the trace source was made for");
  return -1 - iteration;
}

std::int64_t TraceBatchSource::iterations_available(std::int64_t global_batch) const {
  EMBSCALE_EXPECTS(global_batch >= 1, "a global batch of at least one sample");
  return samples_ / global_batch;
}

const std::vector<std::int64_t>& TraceBatchSource::slot_sizes() const {
  // An embscale trace may carry its own key spaces when none were configured.
  return options_.read.slot_sizes.empty() ? reader_->shape().slot_sizes : options_.read.slot_sizes;
}

std::string TraceBatchSource::describe() const {
  std::string text = "trace " + options_.path.string() + " (" + trace::to_string(options_.format) + ", " +
                     std::to_string(samples_) + " samples)";
  for (const auto& note : reader_->notes()) text += "; " + note;
  return text;
}

Batch TraceBatchSource::next_batch(std::int64_t iteration, int rank, int ranks) {
  const std::int64_t b = trace_batch(iteration);
  const std::int64_t G = options_.global_batch;
  EMBSCALE_EXPECTS(b < iterations_available(G), "iteration " + std::to_string(iteration) + " needs batch " +
                                                    std::to_string(b) + " of " + describe() + ", which serves " +
                                                    std::to_string(iterations_available(G)) +
                                                    " (make_batch_source checks the run's iterations against it)");
  const SampleRange share = sample_share(G, rank, ranks);
  position_at(b * G + share.first);
  Batch batch;
  const std::int64_t got = reader_->read(share.count, batch);
  EMBSCALE_EXPECTS(got == share.count, "the trace ended before the samples its headers count");
  batch.first_sample = share.first;
  return batch;
}

void TraceBatchSource::position_at(std::int64_t sample) {
  if (reader_->position() == sample) return;
  if (options_.format != trace::TraceFormat::kNorm) {
    reader_->seek(sample);
    return;
  }
  // Norm cannot seek: back means from the start, forward means parsing what lies between.
  if (sample < reader_->position()) reader_ = trace::open_trace_reader(options_.path, options_.format, options_.read);
  Batch dropped;
  while (reader_->position() < sample) {
    const std::int64_t got = reader_->read(std::min(kSkipChunk, sample - reader_->position()), dropped);
    EMBSCALE_EXPECTS(got > 0, "the trace ended before the samples its headers count");
  }
}

}  // namespace embscale::workloads
