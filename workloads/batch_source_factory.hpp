// The BatchSource of a config's Data layer (core/batch_source.hpp): the synthetic generator for
// "Synthetic", a TraceBatchSource for "Norm", "Raw" and "Embscale". The one place that maps the
// config's data fields onto a source, so a new source is one class and one case here.
#pragma once

#include <memory>

#include "config/config.hpp"
#include "core/batch_source.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::workloads {

// The source of `config`'s Data layer for a run of solver.batchsize samples per iteration (call
// after config::resolve_batch_for_ranks) and solver.warmup_iter warm-up iterations. A trace is
// opened (its headers checked) and its relative source resolved against config.directory;
// check_iterations_fit is applied. Every rank makes its own. InputError for a trace that cannot
// be read or is too short.
std::unique_ptr<BatchSource> make_batch_source(const config::Config& config);

// warmup_iter + max_iter iterations of solver.batchsize samples fit in `source`: else an
// InputError naming solver.max_iter, the source (a trace's describe() gives its samples) and the
// batch size.
void check_iterations_fit(const BatchSource& source, const config::Solver& solver);

// The samples a run of `config` reads from its data: (warmup_iter + max_iter) x solver.batchsize,
// the trace's first batches.
std::int64_t run_samples(const config::Config& config);

// Reads, through a source of its own, every sample a run of `config` reads from its trace: the
// warm-up's and the timed iterations' batches whole (every rank's share), in the trace's order.
// So a record cut short, a header counting more samples than its file holds, an nnz or a key out
// of range or a wrong checksum fails the run before its first step (one rank calls it inside the
// agreed checks: reported once) instead of when the run reaches the record, possibly hours in.
// Nothing for synthetic data or with "trace_check": "headers". Returns the samples read.
std::int64_t check_run_samples(const config::Config& config);

// What a trace reader needs from a config: the Data layer's dims and key spaces (slot_size_array),
// the Norm key width (solver.input_key_type; detected when absent) and checksum mode ("check"),
// max_nnz and Raw's float_label_dense.
trace::TraceReadOptions trace_read_options(const config::Config& config);

}  // namespace embscale::workloads
