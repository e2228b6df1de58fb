// TraceBatchSource (workloads/trace_batch_source.hpp) and make_batch_source: small traces of every
// format written here through the library's writers from batches kept in memory, so the expected
// global batch of an iteration is a slice of what was written, not something a reader computed.
// Each rank is its own source, asked in the run's order (warm-up -1, -2, then 0, 1, ...).
#include "workloads/trace_batch_source.hpp"

#include <gtest/gtest.h>

#include <tuple>

#include "config/config.hpp"
#include "trace_test_support.hpp"
#include "workloads/batch_source_factory.hpp"
#include "workloads/synthetic.hpp"

namespace embscale::workloads {
namespace {

using trace::KeyWidth;
using trace::TraceFormat;
using trace::TraceShape;
using trace::testing::ScratchDir;

constexpr std::int64_t kSamples = 23;  // 4 whole batches of 5, 3 samples left over

const TraceShape kShape{1, 2, 3, {50, 7, 1000}, 0};

// The samples [first, first + count) of `all` as a batch (first_sample: `first`).
Batch slice(const Batch& all, std::int64_t first, std::int64_t count) {
  Batch b;
  b.first_sample = first;
  b.num_samples = count;
  b.num_slots = all.num_slots;
  b.label_dim = all.label_dim;
  b.dense_dim = all.dense_dim;
  const auto S = static_cast<std::size_t>(all.num_slots);
  const auto begin = static_cast<std::size_t>(all.offsets[static_cast<std::size_t>(first) * S]);
  for (std::size_t i = static_cast<std::size_t>(first) * S + 1; i <= static_cast<std::size_t>(first + count) * S; ++i)
    b.offsets.push_back(all.offsets[i] - static_cast<std::int64_t>(begin));
  b.keys.assign(all.keys.begin() + static_cast<std::ptrdiff_t>(begin),
                all.keys.begin() + static_cast<std::ptrdiff_t>(begin) + b.offsets.back());
  const auto L = static_cast<std::size_t>(all.label_dim), D = static_cast<std::size_t>(all.dense_dim);
  const auto f = static_cast<std::size_t>(first), n = static_cast<std::size_t>(count);
  b.labels.assign(all.labels.begin() + static_cast<std::ptrdiff_t>(f * L),
                  all.labels.begin() + static_cast<std::ptrdiff_t>((f + n) * L));
  b.dense.assign(all.dense.begin() + static_cast<std::ptrdiff_t>(f * D),
                 all.dense.begin() + static_cast<std::ptrdiff_t>((f + n) * D));
  return b;
}

// Appends `part` (a rank's share) to `joined`.
void append(Batch& joined, const Batch& part) {
  const std::int64_t base = joined.offsets.back();
  for (std::size_t i = 1; i < part.offsets.size(); ++i) joined.offsets.push_back(base + part.offsets[i]);
  joined.keys.insert(joined.keys.end(), part.keys.begin(), part.keys.end());
  joined.labels.insert(joined.labels.end(), part.labels.begin(), part.labels.end());
  joined.dense.insert(joined.dense.end(), part.dense.begin(), part.dense.end());
  joined.num_samples += part.num_samples;
}

// A trace of kSamples samples in `format` at `path`; returns what was written. Raw is one-hot and
// stores floats (float_label_dense), so that the floats come back bit for bit.
Batch write_trace(const std::filesystem::path& path, TraceFormat format, KeyWidth width = KeyWidth::kI64) {
  const int nnz_min = format == TraceFormat::kRaw ? 1 : 0, nnz_max = format == TraceFormat::kRaw ? 1 : 3;
  const Batch all = trace::testing::random_batch(77, kShape, kSamples, nnz_min, nnz_max);
  trace::TraceWriteOptions wo;
  wo.key_width = width;
  wo.raw_float_label_dense = true;
  wo.samples_per_chunk = 4;  // several embscale chunks: a share starts inside one
  auto writer = trace::open_trace_writer(path, format, kShape, wo);
  writer->write(all);
  writer->close();
  return all;
}

TraceSourceOptions source_options(const std::filesystem::path& path, TraceFormat format, std::int64_t warmup) {
  TraceSourceOptions o;
  o.path = path;
  o.format = format;
  o.read.label_dim = kShape.label_dim;
  o.read.dense_dim = kShape.dense_dim;
  o.read.slot_sizes = kShape.slot_sizes;
  o.read.raw_float_label_dense = true;
  o.global_batch = 5;
  o.warmup_iterations = warmup;
  return o;
}

class TraceSourceFormats : public ::testing::TestWithParam<TraceFormat> {};

TEST_P(TraceSourceFormats, SharesOfOneTwoAndThreeRanksConcatenateToTheTraceBatches) {
  const TraceFormat format = GetParam();
  ScratchDir dir("source-" + trace::to_string(format));
  const Batch all = write_trace(dir / "t", format);
  // Warm-up takes the first batches, the timed iterations follow: -1 -> 0, -2 -> 1, 0 -> 2, 1 -> 3.
  const std::vector<std::pair<std::int64_t, std::int64_t>> order = {{-1, 0}, {-2, 1}, {0, 2}, {1, 3}};
  for (const int ranks : {1, 2, 3}) {
    SCOPED_TRACE(std::to_string(ranks) + " ranks");
    std::vector<std::unique_ptr<TraceBatchSource>> rank_sources;
    for (int r = 0; r < ranks; ++r)
      rank_sources.push_back(std::make_unique<TraceBatchSource>(source_options(dir / "t", format, 2)));
    EXPECT_EQ(rank_sources[0]->iterations_available(5), 4);
    EXPECT_EQ(rank_sources[0]->slot_sizes(), kShape.slot_sizes);
    for (const auto& [iteration, trace_batch] : order) {
      EXPECT_EQ(rank_sources[0]->trace_batch(iteration), trace_batch);
      Batch joined;
      joined.num_slots = kShape.num_slots;
      joined.label_dim = kShape.label_dim;
      joined.dense_dim = kShape.dense_dim;
      for (int r = 0; r < ranks; ++r) {
        const Batch part = rank_sources[static_cast<std::size_t>(r)]->next_batch(iteration, r, ranks);
        validate_batch(part);
        EXPECT_EQ(part.first_sample, sample_share(5, r, ranks).first) << "the index in the global batch";
        EXPECT_EQ(part.num_samples, sample_share(5, r, ranks).count);
        append(joined, part);
      }
      trace::testing::expect_same_batch(joined, slice(all, trace_batch * 5, 5));
    }
  }
}

TEST_P(TraceSourceFormats, ABatchBeforeTheLastIsReadAgain) {
  const TraceFormat format = GetParam();
  ScratchDir dir("source-back-" + trace::to_string(format));
  const Batch all = write_trace(dir / "t", format);
  TraceBatchSource source(source_options(dir / "t", format, 1));
  (void)source.next_batch(2, 1, 2);                // trace batch 3
  const Batch back = source.next_batch(-1, 1, 2);  // trace batch 0: Norm reopens the trace
  trace::testing::expect_same_batch(back, slice(all, 0 * 5 + 3, 2));
}

INSTANTIATE_TEST_SUITE_P(Formats, TraceSourceFormats,
                         ::testing::Values(TraceFormat::kNorm, TraceFormat::kRaw, TraceFormat::kEmbscale),
                         [](const ::testing::TestParamInfo<TraceFormat>& p) { return trace::to_string(p.param); });

TEST(TraceBatchSource, SampleLimitAndIterationBound) {
  ScratchDir dir("source-limit");
  write_trace(dir / "t", TraceFormat::kEmbscale);
  auto options = source_options(dir / "t", TraceFormat::kEmbscale, 0);
  EXPECT_EQ(TraceBatchSource(options).iterations_available(5), 4);  // 23 / 5
  EXPECT_EQ(TraceBatchSource(options).iterations_available(23), 1);
  EXPECT_EQ(TraceBatchSource(options).iterations_available(24), 0);
  options.sample_limit = 14;  // HugeCTR's num_samples: only the first 14 samples
  EXPECT_EQ(TraceBatchSource(options).iterations_available(5), 2);
  options.sample_limit = 24;
  trace::testing::expect_input_error([&] { TraceBatchSource s(options); }, {"num_samples", "24", "holds 23"});
}

// The default config's Data layer over a Norm trace of its shape, as `run` would build it.
config::Config norm_config(const std::filesystem::path& dir) {
  config::Config c = config::default_config();
  c.data.format = config::DataFormat::kNorm;
  c.data.source = "t.norm";  // relative: resolved against c.directory
  c.directory = dir;
  c.data.slot_size_array = kShape.slot_sizes;
  c.data.slot_num = kShape.num_slots;
  c.data.label_dim = kShape.label_dim;
  c.data.dense_dim = kShape.dense_dim;
  c.solver.batchsize = 5;
  c.solver.warmup_iter = 0;
  c.solver.max_iter = 4;
  return c;
}

TEST(MakeBatchSource, TraceLengthBoundsTheIterations) {
  ScratchDir dir("source-factory");
  const Batch all = write_trace(dir / "t.norm", TraceFormat::kNorm, KeyWidth::kI32);  // HugeCTR's default width
  config::Config c = norm_config(dir.path());
  c.solver.warmup_iter = 1;
  c.solver.max_iter = 3;  // 1 + 3 = 4 batches: all the trace has
  const auto source = make_batch_source(c);
  EXPECT_EQ(source->iterations_available(5), 4);
  EXPECT_NE(source->describe().find("Norm keys read as I32, detected"), std::string::npos) << source->describe();
  trace::testing::expect_same_batch(source->next_batch(0, 0, 1), slice(all, 5, 5));

  c.solver.max_iter = 4;
  const std::string path = (dir / "t.norm").string();
  trace::testing::expect_input_error(
      [&] { (void)make_batch_source(c); },
      {"solver.max_iter", "1 warm-up + 4 timed iterations of 5 samples (solver.batchsize)", "need 5 batches", path,
       "23 samples", "holds 4 whole batches", "set max_iter to at most 3",
       // The trace's description (with its reader's notes) after the advice, not inside the sentence.
       "or the batch size. The data: trace " + path});
  c.solver.batchsize = 24;
  trace::testing::expect_input_error([&] { (void)make_batch_source(c); },
                                     {"holds 0 whole batches", "lower the batch size"});

  c = norm_config(dir.path());
  c.solver.input_key_type = "I64";  // the file holds I32 keys: the error says so
  trace::testing::expect_input_error([&] { (void)make_batch_source(c)->next_batch(0, 0, 1); },
                                     {path, "reads consistently with I32 keys", "solver.input_key_type"});
  c = norm_config(dir.path());
  c.data.source = (dir / "missing.norm").string();
  trace::testing::expect_input_error([&] { (void)make_batch_source(c); }, {"missing.norm"});
}

TEST(MakeBatchSource, SyntheticIsUnbounded) {
  const auto source = make_batch_source(config::default_config());
  EXPECT_EQ(source->iterations_available(4096), BatchSource::kUnbounded);
  EXPECT_EQ(source->describe(), "the synthetic generator");
}

}  // namespace
}  // namespace embscale::workloads
