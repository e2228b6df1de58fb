// Norm reader and writer (workloads/trace/norm_format.hpp, norm_file_list.hpp): files written
// field by field here from HugeCTR's description and HugeCTR's checksum rule (length, bytes, sum
// modulo 256), round trips through the writer, file lists, and every refused input naming the
// file, the sample and the byte offset.
#include <gtest/gtest.h>

#include <optional>

#include "trace_test_support.hpp"
#include "workloads/trace/norm_file_list.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace {
namespace {

using testing::Bytes;

struct Sample {
  std::vector<float> labels, dense;
  std::vector<std::vector<std::int64_t>> slots;
};

// A Norm file: header (wrapped in checksum mode), then each sample (wrapped likewise).
Bytes norm_file(bool checksum, KeyWidth width, std::int64_t label_dim, std::int64_t dense_dim, std::int64_t slot_num,
                const std::vector<Sample>& samples, std::optional<std::int64_t> records = {}) {
  Bytes out;
  const auto record = [&](const Bytes& body) {
    if (checksum) out.add<std::int32_t>(static_cast<std::int32_t>(body.size()));
    out.append(body);
    if (checksum) out.add<unsigned char>(body.sum());
  };
  Bytes header;
  header.add<long long>(checksum ? 1 : 0).add<long long>(records.value_or(static_cast<std::int64_t>(samples.size())));
  header.add<long long>(label_dim).add<long long>(dense_dim).add<long long>(slot_num);
  header.add<long long>(0).add<long long>(0).add<long long>(0);
  record(header);
  for (const Sample& s : samples) {
    Bytes body;
    for (const float v : s.labels) body.add(v);
    for (const float v : s.dense) body.add(v);
    for (const auto& keys : s.slots) {
      body.add<int>(static_cast<int>(keys.size()));
      for (const auto k : keys) {
        if (width == KeyWidth::kI32) body.add<unsigned int>(static_cast<unsigned int>(k));
        else body.add<long long>(k);
      }
    }
    record(body);
  }
  return out;
}

const std::vector<Sample> kSamples = {
    {{1.f}, {0.5f, -2.f}, {{0, 10, 32}, {101}}},
    {{0.f}, {7.f, 8.f}, {{}, {100, 199}}},
    {{1.f}, {-1.f, 0.25f}, {{99}, {}}},
};

class NormKinds : public ::testing::TestWithParam<std::tuple<bool, KeyWidth>> {};

TEST_P(NormKinds, ReadsAHandWrittenFile) {
  const auto [checksum, width] = GetParam();
  testing::ScratchDir dir("norm-read");
  norm_file(checksum, width, 1, 2, 2, kSamples).write(dir / "a.data");
  TraceReadOptions options;
  options.norm_key_width = width;
  options.slot_sizes = {100, 100};
  options.max_nnz = 3;
  auto reader = open_trace_reader(dir / "a.data", TraceFormat::kNorm, options);
  EXPECT_EQ(reader->shape().num_samples, 3);
  EXPECT_EQ(reader->shape().num_slots, 2);
  Batch b;
  ASSERT_EQ(reader->read(2, b), 2);
  EXPECT_EQ(b.first_sample, 0);
  EXPECT_EQ(b.offsets, (std::vector<std::int64_t>{0, 3, 4, 4, 6}));
  EXPECT_EQ(b.keys, (std::vector<Key>{0, 10, 32, 101, 100, 199}));
  EXPECT_EQ(b.labels, (std::vector<float>{1.f, 0.f}));
  EXPECT_EQ(b.dense, (std::vector<float>{0.5f, -2.f, 7.f, 8.f}));
  ASSERT_EQ(reader->read(10, b), 1);
  EXPECT_EQ(b.first_sample, 2);
  EXPECT_EQ(b.keys, (std::vector<Key>{99}));
  EXPECT_EQ(reader->read(10, b), 0);
}

TEST_P(NormKinds, RoundTripsRandomBatchesThroughTheWriter) {
  const auto [checksum, width] = GetParam();
  testing::ScratchDir dir("norm-rt");
  TraceShape shape{2, 3, 4, {50, 1, 1000, 7}, 0};
  TraceWriteOptions wo;
  wo.key_width = width;
  wo.norm_checksum = checksum;
  Batch expected;
  {
    auto writer = open_trace_writer(dir / "t.data", TraceFormat::kNorm, shape, wo);
    const Batch a = testing::random_batch(11, shape, 17, 0, 5);
    const Batch b = testing::random_batch(12, shape, 9, 0, 5);
    writer->write(a);
    writer->write(b);
    writer->close();
    EXPECT_EQ(writer->samples_written(), 26);
    expected = testing::random_batch(11, shape, 17, 0, 5);
    const Batch c = testing::random_batch(12, shape, 9, 0, 5);
    for (std::int64_t i = 1; i <= c.num_bags(); ++i) expected.offsets.push_back(expected.keys.size() + c.offsets[i]);
    expected.keys.insert(expected.keys.end(), c.keys.begin(), c.keys.end());
    expected.labels.insert(expected.labels.end(), c.labels.begin(), c.labels.end());
    expected.dense.insert(expected.dense.end(), c.dense.begin(), c.dense.end());
    expected.num_samples = 26;
  }
  TraceReadOptions ro;
  ro.norm_key_width = width;
  ro.slot_sizes = shape.slot_sizes;
  auto reader = open_trace_reader(dir / "t.data", ro);  // detected
  testing::expect_same_batch(testing::read_all(*reader, 7), expected);
  EXPECT_THROW(reader->seek(3), InputError);  // Norm has no index
}

INSTANTIATE_TEST_SUITE_P(ChecksumAndKeyTypes, NormKinds,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(KeyWidth::kI32, KeyWidth::kI64)));

TEST(NormFileList, ReadsItsFilesInOrder) {
  testing::ScratchDir dir("norm-list");
  norm_file(false, KeyWidth::kI64, 1, 2, 2, {kSamples[0], kSamples[1]}).write(dir / "a.data");
  norm_file(true, KeyWidth::kI64, 1, 2, 2, {}).write(dir / "empty.data");
  norm_file(true, KeyWidth::kI64, 1, 2, 2, {kSamples[2]}).write(dir / "b.data");
  write_norm_file_list(dir / "list.txt", {dir / "a.data", dir / "empty.data", dir / "b.data"});
  EXPECT_EQ(detect_trace_format(dir / "list.txt"), TraceFormat::kNorm);
  auto reader = open_trace_reader(dir / "list.txt");
  EXPECT_EQ(reader->shape().num_samples, 3);
  const Batch all = testing::read_all(*reader, 2);
  EXPECT_EQ(all.keys, (std::vector<Key>{0, 10, 32, 101, 100, 199, 99}));
}

TEST(NormFileList, MissingFilesAndWrongCountsNameTheListAndLine) {
  testing::ScratchDir dir("norm-list-bad");
  norm_file(false, KeyWidth::kI64, 1, 2, 2, {kSamples[0]}).write(dir / "a.data");
  const auto list = dir / "list.txt";
  const std::string a = (dir / "a.data").string();
  const auto refused = [&](const std::string& text, const std::vector<std::string>& parts) {
    std::ofstream(list) << text;
    testing::expect_input_error([&] { (void)read_norm_file_list(list); }, parts);
  };
  refused("2\n" + a + "\nmissing.data\n",
          {list.string() + ":3:", "missing.data", "does not exist", "working directory"});
  refused("3\n" + a + "\n" + a + "\n", {list.string() + ":4:", "counts 3", "names 2"});
  refused("1\n" + a + "\n" + a + "\n", {list.string() + ":3:", "counts 1", "more"});
  refused("two\n" + a + "\n", {list.string() + ":1:", "number of data files", "\"two\""});
  refused("0\n", {list.string() + ":1:", "[1, 2^31]"});
  refused("2\n" + a + "\n\n" + a + "\n", {list.string() + ":3:", "empty line"});
  // A trailing CR and trailing empty lines are fine.
  std::ofstream(list) << "1\r\n" << a << "\r\n\n\n";
  EXPECT_EQ(read_norm_file_list(list).size(), 1u);
  testing::expect_input_error([&] { (void)read_norm_file_list(dir / "nope.txt"); }, {"nope.txt", "no such file"});
}

TEST(NormErrors, BadHeadersNameFileAndOffset) {
  testing::ScratchDir dir("norm-header");
  const auto path = dir / "bad.data";
  const std::string name = path.string();
  const auto refused = [&](const Bytes& file, const std::vector<std::string>& parts, TraceReadOptions o = {}) {
    file.write(path);
    std::vector<std::string> all = parts;
    all.push_back(name);
    SCOPED_TRACE(parts.empty() ? "" : parts[0]);
    return testing::expect_input_error([&] { testing::read_through(path, TraceFormat::kNorm, o); }, all);
  };
  refused(Bytes{}, {"empty"});
  Bytes cut = norm_file(false, KeyWidth::kI64, 1, 2, 2, {});
  cut.data.resize(40);
  refused(cut, {"truncated", "header", "[0, 64)", "ends at byte 40"});
  Bytes check2 = norm_file(false, KeyWidth::kI64, 1, 2, 2, {});
  check2.data[0] = 2;
  refused(check2, {"byte 0", "error_check", "got 2"});
  refused(norm_file(false, KeyWidth::kI64, 1, 2, 2, {}, -5), {"byte 8", "number_of_records", "got -5"});
  refused(norm_file(false, KeyWidth::kI64, 1, 2, 2, {kSamples[0]}, 1000), {"byte 8", "number_of_records", "got 1000"});
  refused(norm_file(false, KeyWidth::kI64, -1, 2, 2, {}), {"byte 16", "label_dim", "got -1"});
  refused(norm_file(false, KeyWidth::kI64, 1, 1LL << 40, 2, {}), {"byte 24", "dense_dim", "[0, 1048576]"});
  refused(norm_file(true, KeyWidth::kI64, 1, 2, 0, {}), {"byte 36", "slot_num", "got 0"});
  TraceReadOptions three_slots;
  three_slots.num_slots = 3;
  refused(norm_file(false, KeyWidth::kI64, 1, 2, 2, {}), {"byte 32", "slot_num", "3 (as configured)", "got 2"},
          three_slots);
  Bytes header_sum = norm_file(true, KeyWidth::kI64, 1, 2, 2, {});
  header_sum.data[68] ^= 1;
  refused(header_sum, {"byte 68", "header checkbits"});
  Bytes trailing = norm_file(false, KeyWidth::kI64, 1, 2, 2, {kSamples[0]});
  trailing.add<int>(7);
  refused(trailing, {"end of file", "4 more bytes", "number_of_records = 1"});
}

TEST(NormErrors, BadSamplesNameSampleAndOffset) {
  testing::ScratchDir dir("norm-sample");
  const auto path = dir / "bad.data";
  const auto refused = [&](const Bytes& file, const std::vector<std::string>& parts, TraceReadOptions o = {}) {
    file.write(path);
    std::vector<std::string> all = parts;
    all.push_back(path.string());
    return testing::expect_input_error([&] { testing::read_through(path, TraceFormat::kNorm, o); }, all);
  };
  // Sample 1 starts at 64 + 48 (sample 0: 3 floats, 2 nnz, 4 keys of 8 bytes... = 12 + 8 + 32).
  const std::size_t sample1 = 64 + 12 + 4 + 24 + 4 + 8;
  Bytes cut2 = norm_file(false, KeyWidth::kI64, 1, 2, 2, kSamples, 2);
  cut2.data.resize(sample1 + 12 + 4 + 4 + 8 + 3);  // in sample 1's slot 1 keys
  refused(cut2, {"truncated", "sample 1 slot 1 keys", "[136, 152)", "ends at byte 147"});

  TraceReadOptions small;
  small.max_nnz = 2;
  refused(norm_file(false, KeyWidth::kI64, 1, 2, 2, kSamples),
          {"byte 76", "sample 0 slot 0 nnz", "max_nnz = 2", "got 3"}, small);
  Bytes negative = norm_file(false, KeyWidth::kI64, 1, 2, 2, kSamples);
  const int minus = -4;
  std::memcpy(negative.data.data() + 76, &minus, 4);
  refused(negative, {"byte 76", "sample 0 slot 0 nnz", "got -4"});
  TraceReadOptions spaces;
  spaces.slot_sizes = {100, 50};  // slot 1 is [100, 150): key 199 of sample 1 is outside
  // Sample 1's slot 1 keys are bytes [136, 152): 199, the second, at 144.
  refused(norm_file(false, KeyWidth::kI64, 1, 2, 2, kSamples),
          {"byte 144, sample 1 slot 1 key", "[100, 150)", "got 199"}, spaces);

  Bytes bad_sum = norm_file(true, KeyWidth::kI64, 1, 2, 2, kSamples);
  const std::size_t s0 = 4 + 64 + 1;  // sample 0's length field
  bad_sum.data[s0 + 4 + 1] ^= 0x10;   // a byte of its first label
  refused(bad_sum, {"sample 0 checkbits", "byte " + std::to_string(s0 + 4 + 52), "modulo 256"});
  Bytes long_length = norm_file(true, KeyWidth::kI64, 1, 2, 2, kSamples);
  int length;
  std::memcpy(&length, long_length.data.data() + s0, 4);
  length += 1;  // one more byte than its fields: the checkbits byte is swallowed, the sum now fails
  std::memcpy(long_length.data.data() + s0, &length, 4);
  refused(long_length, {"sample 0"});
  TraceReadOptions i32;
  i32.norm_key_width = KeyWidth::kI32;  // I64 file read as I32: the fields no longer line up
  testing::expect_input_error(
      [&] {
        norm_file(true, KeyWidth::kI64, 1, 2, 2, kSamples).write(path);
        testing::read_through(path, TraceFormat::kNorm, i32);
      },
      {"sample 0 length", "expected 32", "got 52"});
}

// The key width is not in the file: detected when not given, a wrong given one named with the fix.
TEST(NormKeyWidth, DetectedWhenNotGiven) {
  testing::ScratchDir dir("norm-width");
  for (const KeyWidth width : {KeyWidth::kI32, KeyWidth::kI64})
    for (const bool checksum : {false, true}) {
      SCOPED_TRACE(to_string(width) + (checksum ? " checksum" : ""));
      norm_file(checksum, width, 1, 2, 2, kSamples).write(dir / "a.data");
      for (const bool spaces : {false, true}) {  // key spaces help, but are not needed
        TraceReadOptions options;
        if (spaces) options.slot_sizes = {100, 100};
        auto reader = open_trace_reader(dir / "a.data", TraceFormat::kNorm, options);
        EXPECT_EQ(testing::read_all(*reader, 2).keys, (std::vector<Key>{0, 10, 32, 101, 100, 199, 99}));
        ASSERT_EQ(reader->notes().size(), 1u);
        EXPECT_EQ(reader->notes()[0], "Norm keys read as " + to_string(width) + ", detected: the first 3 samples of " +
                                          (dir / "a.data").string() + " read only with " +
                                          (width == KeyWidth::kI32 ? "32" : "64") + "-bit keys");
      }
    }
}

TEST(NormKeyWidth, BothWidthsReadingMeansHugeCtrsDefault) {
  testing::ScratchDir dir("norm-width-both");
  // No keys at all: either width reads the samples; I32 is HugeCTR's default, and the note says so.
  norm_file(false, KeyWidth::kI64, 1, 2, 2, {{{1.f}, {0.f, 0.f}, {{}, {}}}, {{0.f}, {1.f, 2.f}, {{}, {}}}})
      .write(dir / "a.data");
  auto reader = open_trace_reader(dir / "a.data", TraceFormat::kNorm, {});
  EXPECT_EQ(reader->shape().num_samples, 2);
  ASSERT_EQ(reader->notes().size(), 1u);
  EXPECT_NE(reader->notes()[0].find("Norm keys read as I32, HugeCTR's default input_key_type"), std::string::npos);
  EXPECT_NE(reader->notes()[0].find("--key-type"), std::string::npos);
  // Given: nothing to note.
  TraceReadOptions given;
  given.norm_key_width = KeyWidth::kI64;
  EXPECT_TRUE(open_trace_reader(dir / "a.data", TraceFormat::kNorm, given)->notes().empty());
}

TEST(NormKeyWidth, AWrongGivenWidthNamesTheOther) {
  testing::ScratchDir dir("norm-width-wrong");
  const auto path = dir / "a.data";
  for (const KeyWidth width : {KeyWidth::kI32, KeyWidth::kI64}) {
    const KeyWidth other = width == KeyWidth::kI32 ? KeyWidth::kI64 : KeyWidth::kI32;
    norm_file(false, width, 1, 2, 2, kSamples).write(path);
    TraceReadOptions options;
    options.norm_key_width = other;
    testing::expect_input_error(
        [&] { testing::read_through(path, TraceFormat::kNorm, options); },
        {path.string(),
         path.string() + " reads consistently with " + to_string(width) + " keys, not the " + to_string(other) +
             " it was read with",
         "solver.input_key_type \"" + to_string(width) + "\"", "--key-type " + to_string(width)});
  }
  // A damaged file reads with neither width: no width is blamed, and the error is the file's.
  Bytes trailing = norm_file(false, KeyWidth::kI64, 1, 2, 2, {kSamples[0]});
  trailing.add<int>(7);
  trailing.write(path);
  const auto message = testing::expect_input_error([&] { testing::read_through(path, TraceFormat::kNorm, {}); },
                                                   {"4 more bytes", "neither I32 nor I64 keys read the first 1 samples",
                                                    "read as I64, which got further", "damaged"});
  EXPECT_EQ(message.find("reads consistently"), std::string::npos) << message;
}

TEST(NormChecksum, TheConfiguredModeMustBeTheFilesMode) {
  testing::ScratchDir dir("norm-check");
  const auto path = dir / "a.data";
  for (const bool checksum : {false, true}) {
    norm_file(checksum, KeyWidth::kI32, 1, 2, 2, kSamples).write(path);
    TraceReadOptions options;
    options.norm_checksum = checksum;
    EXPECT_EQ(open_trace_reader(path, TraceFormat::kNorm, options)->shape().num_samples, 3);
    options.norm_checksum = !checksum;
    testing::expect_input_error(
        [&] { (void)open_trace_reader(path, TraceFormat::kNorm, options); },
        {path.string(), "byte 0, checksum mode", checksum ? "set \"check\": \"Sum\"" : "set \"check\": \"None\""});
  }
}

TEST(NormWriter, RefusesKeysOutsideI32AndLeavesNoFileWithoutClose) {
  testing::ScratchDir dir("norm-writer");
  TraceShape shape{1, 0, 1, {}, 0};
  TraceWriteOptions wo;
  wo.key_width = KeyWidth::kI32;
  Batch b;
  b.num_samples = 1;
  b.num_slots = 1;
  b.label_dim = 1;
  b.labels = {1.f};
  b.keys = {Key{1} << 33};
  b.offsets = {0, 1};
  {
    auto writer = open_trace_writer(dir / "w.data", TraceFormat::kNorm, shape, wo);
    testing::expect_input_error([&] { writer->write(b); }, {"w.data", "sample 0 slot 0 key", "I32"});
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "w.data"));
  EXPECT_TRUE(std::filesystem::is_empty(dir.path())) << "a temporary file was left";
}

}  // namespace
}  // namespace embscale::trace
