// embscale's trace format (workloads/trace/embscale_format.hpp): a file written field by field
// here from the layout in the header comment, round trips at several chunk sizes and both key
// widths, seek against a sequential read, and damaged files refused with file, sample and offset.
#include <gtest/gtest.h>

#include "core/checksum.hpp"
#include "trace_test_support.hpp"
#include "workloads/trace/embscale_format.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace {
namespace {

using testing::Bytes;

std::uint64_t sum(const Bytes& b, std::size_t from, std::size_t to) {
  return checksum64(b.data.data() + from, to - from);
}

// One label, no dense, 2 slots with key spaces {4, 6}, 8-byte keys, 2 samples per chunk; three
// samples: bags {1}, {4, 5} | {}, {9} | {0, 3}, {} .
Bytes hand_written_file() {
  Bytes f;
  for (const char c : std::string("EMBSTRCE")) f.add<char>(c);
  f.add<std::uint32_t>(1).add<std::uint32_t>(56 + 16).add<std::uint8_t>(8).add<std::uint8_t>(0).add<std::uint16_t>(0);
  f.add<std::uint32_t>(1).add<std::uint32_t>(0).add<std::uint32_t>(2).add<std::uint32_t>(2).add<std::uint32_t>(2);
  f.add<std::uint64_t>(0).add<std::int64_t>(4).add<std::int64_t>(6);
  f.add<std::uint64_t>(sum(f, 0, f.size()));
  const auto chunk = [&](std::uint32_t n, std::uint64_t index, std::uint64_t first, std::vector<std::uint32_t> nnz,
                         std::vector<float> labels, std::vector<std::int64_t> keys) {
    const std::size_t at = f.size();
    for (const char c : std::string("TCHK")) f.add<char>(c);
    f.add<std::uint32_t>(n).add<std::uint64_t>(index).add<std::uint64_t>(first).add<std::uint64_t>(keys.size());
    for (const auto v : nnz) f.add(v);
    for (const auto v : labels) f.add(v);
    for (const auto k : keys) f.add(k);
    while (f.size() % 8) f.add<std::uint8_t>(0);
    f.add<std::uint64_t>(sum(f, at, f.size()));
    return at;
  };
  const std::size_t c0 = chunk(2, 0, 0, {1, 2, 0, 1}, {1.f, 0.f}, {1, 4, 5, 9});
  const std::size_t c1 = chunk(1, 1, 2, {2, 0}, {0.5f}, {0, 3});
  const std::size_t index_at = f.size();
  for (const char c : std::string("TIDX")) f.add<char>(c);
  f.add<std::uint32_t>(0).add<std::uint64_t>(2).add<std::uint64_t>(0).add<std::uint64_t>(c0);
  f.add<std::uint64_t>(2).add<std::uint64_t>(c1);
  f.add<std::uint64_t>(sum(f, index_at, f.size()));
  for (const char c : std::string("TEND")) f.add<char>(c);
  f.add<std::uint32_t>(0).add<std::uint64_t>(index_at).add<std::uint64_t>(3);
  f.add<std::uint64_t>(sum(f, 0, f.size()));
  return f;
}

TEST(EmbscaleTrace, ReadsAHandWrittenFile) {
  testing::ScratchDir dir("emb-hand");
  hand_written_file().write(dir / "t.trace");
  EXPECT_EQ(detect_trace_format(dir / "t.trace"), TraceFormat::kEmbscale);
  auto reader = open_trace_reader(dir / "t.trace");
  EXPECT_EQ(reader->shape().num_samples, 3);
  EXPECT_EQ(reader->shape().slot_sizes, (std::vector<std::int64_t>{4, 6}));
  const Batch all = testing::read_all(*reader, 2);
  EXPECT_EQ(all.offsets, (std::vector<std::int64_t>{0, 1, 3, 3, 4, 6, 6}));
  EXPECT_EQ(all.keys, (std::vector<Key>{1, 4, 5, 9, 0, 3}));
  EXPECT_EQ(all.labels, (std::vector<float>{1.f, 0.f, 0.5f}));
  reader->seek(1);
  Batch b;
  ASSERT_EQ(reader->read(1, b), 1);
  EXPECT_EQ(b.first_sample, 1);
  EXPECT_EQ(b.keys, (std::vector<Key>{9}));
}

class EmbscaleRoundTrip : public ::testing::TestWithParam<std::tuple<KeyWidth, std::int64_t>> {};

TEST_P(EmbscaleRoundTrip, RandomBatchesComeBackAndSeekAgrees) {
  const auto [width, per_chunk] = GetParam();
  testing::ScratchDir dir("emb-rt");
  const TraceShape shape{1, 3, 5, {3, 100, 1, 70000, 12}, 0};
  TraceWriteOptions wo;
  wo.key_width = width;
  wo.samples_per_chunk = per_chunk;
  Batch expected;
  {
    auto writer = open_trace_writer(dir / "t.trace", TraceFormat::kEmbscale, shape, wo);
    expected = testing::random_batch(21, shape, 61, 0, 4);
    for (std::int64_t first = 0; first < 61; first += 13) {  // the same samples in pieces
      Batch piece = testing::random_batch(21, shape, 61, 0, 4);
      const std::int64_t n = std::min<std::int64_t>(13, 61 - first);
      Batch part;
      part.num_samples = n;
      part.num_slots = 5;
      part.label_dim = 1;
      part.dense_dim = 3;
      const auto k0 = piece.offsets[first * 5];
      for (std::int64_t b = first * 5 + 1; b <= (first + n) * 5; ++b) part.offsets.push_back(piece.offsets[b] - k0);
      part.keys.assign(piece.keys.begin() + k0, piece.keys.begin() + piece.offsets[(first + n) * 5]);
      part.labels.assign(piece.labels.begin() + first, piece.labels.begin() + first + n);
      part.dense.assign(piece.dense.begin() + first * 3, piece.dense.begin() + (first + n) * 3);
      writer->write(part);
    }
    writer->close();
  }
  TraceReadOptions ro;
  ro.max_nnz = 4;
  auto reader = open_trace_reader(dir / "t.trace", TraceFormat::kEmbscale, ro);
  EXPECT_EQ(reader->shape().slot_sizes, shape.slot_sizes);
  const Batch all = testing::read_all(*reader, 10);  // sequential: the file checksum is checked too
  testing::expect_same_batch(all, expected);
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < 20; ++trial) {
    const auto at = static_cast<std::int64_t>(rng() % 62);
    const auto n = static_cast<std::int64_t>(rng() % 9);
    reader->seek(at);
    Batch b;
    const std::int64_t got = reader->read(n, b);
    ASSERT_EQ(got, std::min<std::int64_t>(n, 61 - at));
    EXPECT_EQ(b.first_sample, at);
    for (std::int64_t i = 0; i < got; ++i) {
      for (int j = 0; j < 5; ++j) {
        const auto mine = b.bag(i * 5 + j);
        const auto theirs = all.bag((at + i) * 5 + j);
        EXPECT_TRUE(std::equal(mine.begin(), mine.end(), theirs.begin(), theirs.end())) << "sample " << at + i;
      }
      EXPECT_EQ(b.labels[i], all.labels[at + i]);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(KeyWidthsAndChunks, EmbscaleRoundTrip,
                         ::testing::Combine(::testing::Values(KeyWidth::kI32, KeyWidth::kI64),
                                            ::testing::Values(1, 3, 61, 0)));

TEST(EmbscaleTrace, AnEmptyTraceRoundTrips) {
  testing::ScratchDir dir("emb-empty");
  auto writer = open_trace_writer(dir / "t.trace", TraceFormat::kEmbscale, TraceShape{0, 0, 1, {}, 0});
  writer->close();
  auto reader = open_trace_reader(dir / "t.trace");
  Batch b;
  EXPECT_EQ(reader->read(4, b), 0);
  EXPECT_EQ(reader->shape().num_samples, 0);
}

TEST(EmbscaleErrors, DamagedFilesNameFileSampleAndOffset) {
  testing::ScratchDir dir("emb-bad");
  const auto path = dir / "t.trace";
  const Bytes good = hand_written_file();
  const auto refused = [&](const Bytes& file, const std::vector<std::string>& parts, TraceReadOptions o = {}) {
    file.write(path);
    std::vector<std::string> all = parts;
    all.push_back(path.string());
    return testing::expect_input_error([&] { testing::read_through(path, TraceFormat::kEmbscale, o); }, all);
  };
  const auto changed = [&](std::size_t at, unsigned char v) {
    Bytes b = good;
    b.data[at] = v;
    return b;
  };
  refused(changed(0, 'X'), {"byte 0", "header magic", "\"XMBSTRCE\""});
  refused(changed(8, 2), {"byte 8", "format_version", "got 2"});
  refused(changed(21, 1), {"header_checksum", "damaged"});
  for (const std::size_t keep : {std::size_t{40}, std::size_t{100}, good.size() - 1}) {
    Bytes cut = good;
    cut.data.resize(keep);
    // Truncated anywhere: refused, naming the byte where the file ends, or where the trailer (read
    // from the end) is not one.
    if (keep == good.size() - 1) {
      refused(cut, {"byte " + std::to_string(keep - 32), "trailer magic", "a file cut short has none"});
    } else {
      refused(cut, {"truncated", "the file ends at byte " + std::to_string(keep)});
    }
  }
  Bytes cut = good;
  cut.data.resize(good.size() - 8);
  refused(cut, {"trailer magic", "a file cut short has none"});
  // Chunk 1 starts at 72 + 32 + 16 + 8 + 16 + 8 = 152 (chunk 0: header, 4 nnz, 2 labels, 4 keys,
  // checksum); its second key (3) sits at 152 + 32 + 8 + 4 + 4 (padding to 8) ... flip a key byte.
  const std::size_t chunk1 = 72 + 32 + 16 + 8 + 32 + 8;
  refused(changed(chunk1 + 32 + 8 + 4 + 8, 0x7f), {"chunk 1 (samples [2, 3)) chunk_checksum", "damaged"});
  refused(changed(good.size() - 1, 0), {"byte " + std::to_string(good.size() - 8), "trailer file_checksum"});
  // A seek skips the whole-file check (it needs every byte), so the same file reads from sample 1.
  {
    changed(good.size() - 1, 0).write(path);
    auto reader = open_trace_reader(path);
    reader->seek(1);
    Batch b;
    EXPECT_EQ(reader->read(5, b), 2);
  }
  TraceReadOptions small;
  small.max_nnz = 1;
  refused(good, {"sample 0 slot 1 nnz", "max_nnz = 1", "got 2", "byte " + std::to_string(72 + 32 + 4)}, small);
  TraceReadOptions other;
  other.slot_sizes = {4, 7};
  refused(good, {"slot_sizes", "differ"}, other);
  TraceReadOptions label2;
  label2.label_dim = 2;
  refused(good, {"byte 20", "label_dim", "2 (as configured)", "got 1"}, label2);
}

TEST(EmbscaleErrors, KeysOutsideTheirSlotAreNamed) {
  testing::ScratchDir dir("emb-keys");
  const TraceShape shape{0, 0, 2, {}, 0};
  auto writer = open_trace_writer(dir / "t.trace", TraceFormat::kEmbscale, shape);
  Batch b = testing::random_batch(3, shape, 4, 1, 1);
  b.keys = {0, 10, 1, 11, 2, 3, 3, 12};  // sample 2's slot 1 key 3 lies in slot 0's space [0, 10)
  writer->write(b);
  writer->close();
  TraceReadOptions o;
  o.slot_sizes = {10, 10};
  testing::expect_input_error([&] { testing::read_through(dir / "t.trace", TraceFormat::kEmbscale, o); },
                              {(dir / "t.trace").string(), "sample 2 slot 1 key", "[10, 20)", "got 3", "byte "});
}

}  // namespace
}  // namespace embscale::trace
