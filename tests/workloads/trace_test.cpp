// The common trace API (workloads/trace/trace.hpp): format names, detection, and the writers'
// atomicity (no file before close, none after a failed write).
#include <gtest/gtest.h>

#include "trace_test_support.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace {
namespace {

TEST(TraceFormat, NamesAndParquet) {
  EXPECT_EQ(parse_trace_format("Norm"), TraceFormat::kNorm);
  EXPECT_EQ(parse_trace_format("raw"), TraceFormat::kRaw);
  EXPECT_EQ(parse_trace_format("embscale"), TraceFormat::kEmbscale);
  testing::expect_input_error([] { (void)parse_trace_format("parquet"); },
                              {"Parquet is not readable in this build", "scripts/parquet-to-embscale.py"});
  testing::expect_input_error([] { (void)parse_trace_format("csv"); }, {"norm, raw or embscale", "\"csv\""});
}

TEST(TraceFormat, DetectionByFirstBytes) {
  testing::ScratchDir dir("detect");
  testing::Bytes parquet;
  for (const char c : std::string("PAR1\x15\x04")) parquet.add<char>(c);
  parquet.write(dir / "p.parquet");
  testing::expect_input_error([&] { (void)detect_trace_format(dir / "p.parquet"); },
                              {"p.parquet", "Parquet", "scripts/parquet-to-embscale.py"});
  testing::expect_input_error([&] { (void)open_trace_reader(dir / "p.parquet"); }, {"Parquet"});
  testing::Bytes text;
  for (const char c : std::string("hello\n")) text.add<char>(c);
  text.write(dir / "h.txt");
  testing::expect_input_error([&] { (void)detect_trace_format(dir / "h.txt"); },
                              {"h.txt", "cannot tell the trace format", "--format raw"});
  testing::expect_input_error([&] { (void)detect_trace_format(dir / "none"); }, {"none", "no such file"});
  testing::expect_input_error([&] { (void)detect_trace_format(dir.path()); }, {"directory"});
  // Written by the library: embscale by magic, Norm data by its header.
  const TraceShape shape{1, 0, 1, {}, 0};
  for (const auto format : {TraceFormat::kNorm, TraceFormat::kEmbscale}) {
    auto writer = open_trace_writer(dir / "t", format, shape);
    writer->write(testing::random_batch(1, shape, 3, 0, 2));
    writer->close();
    EXPECT_EQ(detect_trace_format(dir / "t"), format) << to_string(format);
  }
}

TEST(TraceWriter, WritesNothingBeforeCloseAndRefusesImpossiblePaths) {
  testing::ScratchDir dir("atomic");
  const TraceShape shape{1, 2, 3, {5, 5, 5}, 0};
  for (const auto format : {TraceFormat::kNorm, TraceFormat::kRaw, TraceFormat::kEmbscale}) {
    {
      TraceWriteOptions wo;
      wo.raw_float_label_dense = true;
      auto writer = open_trace_writer(dir / "t", format, shape, wo);
      writer->write(testing::random_batch(2, shape, 5, 1, 1));
      EXPECT_FALSE(std::filesystem::exists(dir / "t")) << to_string(format);
    }  // destroyed without close
    EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << to_string(format) << ": a temporary file was left";
  }
  testing::expect_input_error([&] { (void)open_trace_writer(dir / "no/such/dir/t", TraceFormat::kNorm, shape); },
                              {"no/such/dir", "does not exist"});
  TraceShape bad = shape;
  bad.slot_sizes = {5, 0, 5};
  testing::expect_input_error([&] { (void)open_trace_writer(dir / "t", TraceFormat::kEmbscale, bad); },
                              {"slot_size_array[1]", "got 0"});
}

}  // namespace
}  // namespace embscale::trace
