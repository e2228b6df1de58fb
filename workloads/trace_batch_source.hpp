// TraceBatchSource: a recorded trace (workloads/trace/: HugeCTR's Norm or Raw, or embscale's own
// format) as the BatchSource of a run (core/batch_source.hpp).
//
// Batches. Batch b of the trace is its samples [b * G, (b + 1) * G), G the global batch; a trace of
// S samples serves floor(S / G) batches (a last partial batch is never used). Warm-up iterations
// take the first batches of the trace and the timed ones follow: warm-up iteration -1 - i reads
// batch i, timed iteration t reads batch W + t (W warm-up iterations). So a run needs W + N
// batches (make_batch_source checks it), and runs with different warm-up counts time different
// batches.
//
// Shares. A rank reads only its share of each batch (workloads::sample_share), and the shares of
// 1, 2 or 3 ranks concatenate to the same global batch. Raw and embscale traces seek to the rank's
// first sample: a rank reads 1/ranks of the trace. Norm samples have variable length and no index:
// a rank reads the trace in order and parses, then drops, the other ranks' samples, so every rank
// reads and checks the whole trace up to its last batch (ranks times the bytes from the file
// system, and each rank's read time is the whole trace's). Reading happens outside the timed
// region; convert a large Norm trace with `embscale trace convert` to read shares only. A batch
// before the last one read (out of the run's order) reopens a Norm trace from its start.
//
// A Batch handed out has first_sample = the index of the rank's first sample in the global batch
// (as the synthetic generator's) and unified keys (Raw's per-slot keys offset by the reader).
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "core/batch_source.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::workloads {

struct TraceSourceOptions {
  std::filesystem::path path;
  trace::TraceFormat format = trace::TraceFormat::kEmbscale;
  trace::TraceReadOptions read;        // shape checks, key spaces (read.slot_sizes), Norm key width
  std::int64_t global_batch = 0;       // samples per iteration over all ranks, >= 1
  std::int64_t warmup_iterations = 0;  // W: the trace's first W batches are the warm-up's
  // > 0: only the trace's first sample_limit samples are used (HugeCTR's num_samples); more than
  // the trace holds is an InputError.
  std::int64_t sample_limit = 0;
};

class TraceBatchSource final : public BatchSource {
 public:
  // Opens the trace (its headers are checked now; samples as they are read).
  explicit TraceBatchSource(TraceSourceOptions options);

  Batch next_batch(std::int64_t iteration, int rank, int ranks) override;
  std::int64_t iterations_available(std::int64_t global_batch) const override;
  const std::vector<std::int64_t>& slot_sizes() const override;
  // "trace data/list.txt (norm, 20000 samples)", plus what the reader assumed (a detected Norm
  // key width).
  std::string describe() const override;

  // The trace batch an iteration reads (see above).
  std::int64_t trace_batch(std::int64_t iteration) const;
  // The samples used: the trace's, or sample_limit.
  std::int64_t samples() const noexcept { return samples_; }

 private:
  // Moves the reader to `sample`: a seek, or for Norm reading and dropping up to it.
  void position_at(std::int64_t sample);

  TraceSourceOptions options_;
  std::unique_ptr<trace::TraceReader> reader_;
  std::int64_t samples_ = 0;
};

}  // namespace embscale::workloads
