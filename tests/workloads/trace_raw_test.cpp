// Raw reader and writer (workloads/trace/raw_format.hpp): int32 records written field by field
// here, per-slot keys offset into unified ones, HugeCTR's log(dense + 1) in int mode, float mode,
// seek, write(read(f)) == f, and the refused inputs.
#include <gtest/gtest.h>

#include <cmath>

#include "trace_test_support.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace {
namespace {

using testing::Bytes;

TraceReadOptions raw_options(bool float_mode) {
  TraceReadOptions o;
  o.label_dim = 1;
  o.dense_dim = 2;
  o.slot_sizes = {10, 3, 1000};
  o.raw_float_label_dense = float_mode;
  return o;
}

// label, dense[2], category[3] per record.
Bytes int_records() {
  Bytes b;
  b.add<int>(1).add<int>(0).add<int>(6).add<int>(9).add<int>(2).add<int>(999);
  b.add<int>(0).add<int>(3).add<int>(0).add<int>(0).add<int>(0).add<int>(0);
  b.add<int>(1).add<int>(1).add<int>(1).add<int>(5).add<int>(1).add<int>(7);
  return b;
}

TEST(RawReader, IntModeOffsetsKeysAndTakesLogOfDense) {
  testing::ScratchDir dir("raw-int");
  int_records().write(dir / "r.bin");
  auto reader = open_trace_reader(dir / "r.bin", TraceFormat::kRaw, raw_options(false));
  EXPECT_EQ(reader->shape().num_samples, 3);
  Batch b;
  ASSERT_EQ(reader->read(10, b), 3);
  EXPECT_EQ(b.keys, (std::vector<Key>{9, 12, 1012, 0, 10, 13, 5, 11, 20}));
  EXPECT_EQ(b.offsets, (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  EXPECT_EQ(b.labels, (std::vector<float>{1.f, 0.f, 1.f}));
  EXPECT_EQ(b.dense, (std::vector<float>{std::log(1.f), std::log(7.f), std::log(4.f), std::log(1.f), std::log(2.f),
                                         std::log(2.f)}));
  reader->seek(1);
  ASSERT_EQ(reader->read(1, b), 1);
  EXPECT_EQ(b.first_sample, 1);
  EXPECT_EQ(b.keys, (std::vector<Key>{0, 10, 13}));
}

TEST(RawReader, FloatModeReadsFloatBits) {
  testing::ScratchDir dir("raw-float");
  Bytes b;
  b.add<float>(0.5f).add<float>(-1.25f).add<float>(3.5f).add<int>(4).add<int>(2).add<int>(0);
  b.write(dir / "r.bin");
  auto reader = open_trace_reader(dir / "r.bin", TraceFormat::kRaw, raw_options(true));
  Batch batch;
  ASSERT_EQ(reader->read(5, batch), 1);
  EXPECT_EQ(batch.labels, (std::vector<float>{0.5f}));
  EXPECT_EQ(batch.dense, (std::vector<float>{-1.25f, 3.5f}));
  EXPECT_EQ(batch.keys, (std::vector<Key>{4, 12, 13}));
}

TEST(RawWriter, RewritesAnIntModeFileByteForByte) {
  testing::ScratchDir dir("raw-rewrite");
  int_records().write(dir / "r.bin");
  auto reader = open_trace_reader(dir / "r.bin", TraceFormat::kRaw, raw_options(false));
  const Batch all = testing::read_all(*reader, 2);
  auto writer = open_trace_writer(dir / "w.bin", TraceFormat::kRaw, reader->shape());
  writer->write(all);
  writer->close();
  EXPECT_EQ(testing::read_file(dir / "w.bin"), int_records().data);
}

TEST(RawWriter, FloatModeRoundTripsRandomOneHotBatches) {
  testing::ScratchDir dir("raw-rt");
  const TraceShape shape{1, 2, 3, {10, 3, 1000}, 0};
  TraceWriteOptions wo;
  wo.raw_float_label_dense = true;
  auto writer = open_trace_writer(dir / "w.bin", TraceFormat::kRaw, shape, wo);
  const Batch batch = testing::random_batch(7, shape, 40, 1, 1);
  writer->write(batch);
  writer->close();
  auto reader = open_trace_reader(dir / "w.bin", TraceFormat::kRaw, raw_options(true));
  testing::expect_same_batch(testing::read_all(*reader, 9), batch);
  reader->seek(17);
  Batch one;
  ASSERT_EQ(reader->read(1, one), 1);
  EXPECT_EQ(one.keys[0], batch.keys[17 * 3]);
}

TEST(RawErrors, RefusedInputsNameFileSampleAndOffset) {
  testing::ScratchDir dir("raw-bad");
  const auto path = dir / "r.bin";
  const auto refused = [&](const Bytes& file, const std::vector<std::string>& parts, const TraceReadOptions& o) {
    file.write(path);
    std::vector<std::string> all = parts;
    all.push_back(path.string());
    testing::expect_input_error([&] { testing::read_through(path, TraceFormat::kRaw, o); }, all);
  };
  Bytes cut = int_records();
  cut.data.resize(cut.size() - 5);
  refused(cut, {"truncated", "sample 2 record", "24 bytes", "[48, 72)", "ends at byte 67"}, raw_options(false));
  Bytes bad_key = int_records();
  bad_key.data[4 * 10] = 3;  // sample 1's slot 1 key: 3 in a space of 3
  refused(bad_key, {"byte 40", "sample 1 slot 1 key", "[0, 3)", "got 3"}, raw_options(false));
  Bytes negative = int_records();
  const int minus = -2;
  std::memcpy(negative.data.data() + 4 * 8, &minus, 4);  // sample 1's dense 1
  refused(negative, {"byte 32", "sample 1 dense 1", "got -2"}, raw_options(false));
  TraceReadOptions missing;
  missing.slot_sizes = {10, 3, 1000};
  refused(int_records(), {"label_dim, dense_dim and slot_size_array"}, missing);
  TraceReadOptions wrong_slots = raw_options(false);
  wrong_slots.num_slots = 4;
  refused(int_records(), {"slot_num 4", "3 entries"}, wrong_slots);
  // Not detectable: the message says to name the format.
  testing::expect_input_error([&] { (void)detect_trace_format(path); }, {"Raw", "--format raw"});
}

TEST(RawWriter, IntModeRefusesLabelsThatAreNotInts) {
  testing::ScratchDir dir("raw-int-writer");
  const TraceShape shape{1, 0, 1, {5}, 0};
  Batch b = testing::random_batch(1, shape, 1, 1, 1);
  b.labels = {0.5f};
  auto writer = open_trace_writer(dir / "w.bin", TraceFormat::kRaw, shape);
  testing::expect_input_error([&] { writer->write(b); }, {"w.bin", "sample 0 label 0.5", "not an int32"});
}

TEST(RawWriter, RefusesMultiHotBagsAndKeysOutsideTheirSlot) {
  testing::ScratchDir dir("raw-writer");
  const TraceShape shape{1, 0, 2, {5, 5}, 0};
  Batch two = testing::random_batch(1, shape, 1, 2, 2);
  TraceWriteOptions wo;
  wo.raw_float_label_dense = true;
  auto writer = open_trace_writer(dir / "w.bin", TraceFormat::kRaw, shape, wo);
  testing::expect_input_error([&] { writer->write(two); }, {"w.bin", "one-hot", "holds 2 keys"});
  Batch outside = testing::random_batch(1, shape, 1, 1, 1);
  outside.keys[1] = 2;  // slot 1's space is [5, 10)
  testing::expect_input_error([&] { writer->write(outside); }, {"sample 0 slot 1 key 2", "[5, 10)"});
}

}  // namespace
}  // namespace embscale::trace
