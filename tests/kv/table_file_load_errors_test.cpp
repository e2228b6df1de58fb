// load() of damaged and mismatched files (kv/table_file.hpp): a file cut at every byte, a byte
// flipped anywhere, wrong magic and version, fields out of range, key type / dim / optimizer width
// / score strategy mismatches, an empty file, a directory, a missing file. Each is an InputError
// that names the file and the field or offset, and the table is exactly as it was.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/checksum.hpp"
#include "core/error.hpp"
#include "kv/table_file.hpp"
#include "table_file_testing.hpp"

namespace embscale::kv {
namespace {

using testing::dump_options;
using testing::fill_random;
using testing::ScratchDir;
using testing::snapshot;
using testing::Snapshot;

class LoadErrors : public ::testing::Test {
 protected:
  LoadErrors() : dir_("table_file_load_errors"), target_(options()) {
    HostKvTable<std::int64_t> source(options());
    fill_random(source, 10, 1);
    // 4 entries per chunk: 3 chunks, the last one partial.
    dump(source.table(), KeyType::kInt64, dir_ / "good", {4, {}});
    good_ = testing::read_bytes(dir_ / "good");
    fill_random(target_, 30, 2);
    before_ = snapshot(target_);
  }

  static TableOptions options() { return dump_options(ValueType::kFloat32, true, 4096); }

  // Loads `bytes` from a file; expects an InputError whose message names the file and contains
  // every one of `parts`, and the table unchanged. Returns the message.
  std::string expect_refused(const std::vector<std::byte>& bytes, const std::vector<std::string>& parts) {
    const auto path = dir_ / "bad";
    testing::write_bytes(path, bytes);
    return expect_refused_path(path, parts);
  }
  std::string expect_refused_path(const std::filesystem::path& path, const std::vector<std::string>& parts) {
    std::string message;
    try {
      target_.load(path);
      ADD_FAILURE() << "load accepted it";
    } catch (const InputError& e) {
      message = e.what();
    }
    EXPECT_NE(message.find(path.string()), std::string::npos) << message;
    for (const auto& part : parts)
      EXPECT_NE(message.find(part), std::string::npos) << "no '" << part << "' in: " << message;
    EXPECT_EQ(target_.size(), static_cast<std::int64_t>(before_.size()));
    return message;
  }
  void expect_table_unchanged() { EXPECT_EQ(snapshot(target_), before_); }

  // Writes a header field and reseals the header and file checksums, so that the field itself
  // is what the reader meets.
  template <typename T> std::vector<std::byte> with_field(std::size_t offset, T value) const {
    auto bytes = good_;
    std::memcpy(bytes.data() + offset, &value, sizeof value);
    reseal(bytes);
    return bytes;
  }
  static void reseal(std::vector<std::byte>& bytes) {
    const std::uint64_t header = checksum64(bytes.data(), 88);
    std::memcpy(bytes.data() + 88, &header, 8);
    const std::uint64_t whole = checksum64(bytes.data(), bytes.size() - 8);
    std::memcpy(bytes.data() + bytes.size() - 8, &whole, 8);
  }

  ScratchDir dir_;
  HostKvTable<std::int64_t> target_;
  std::vector<std::byte> good_;
  Snapshot before_;
};

TEST_F(LoadErrors, TheGoodFileLoads) { EXPECT_EQ(target_.load(dir_ / "good").entries, 10); }

// Where each header field starts (kv/table_file_format.hpp).
const std::vector<std::pair<std::size_t, std::string>> kHeaderFields = {
    {0, "magic"},       {8, "format_version"},   {12, "header_bytes"}, {16, "key_type"},
    {17, "value_type"}, {18, "score_strategy"},  {19, "flags"},        {20, "chunk_entries"},
    {24, "dim"},        {32, "optimizer_width"}, {40, "entry_count"},  {48, "chunk_count"},
    {56, "threshold"},  {64, "next_threshold"},  {72, "reserved"},     {88, "header_checksum"}};

TEST_F(LoadErrors, TruncatedAtEveryByte) {
  ASSERT_GT(good_.size(), 400u);
  for (std::size_t size = 0; size < good_.size(); ++size) {
    SCOPED_TRACE("cut at byte " + std::to_string(size));
    const std::vector<std::byte> cut(good_.begin(), good_.begin() + static_cast<long>(size));
    if (size == 0) {
      expect_refused(cut, {"empty"});
    } else if (size < 96) {
      std::string field;
      for (const auto& [offset, name] : kHeaderFields)
        if (offset <= size) field = name;
      // The cut field, or for a cut at a field boundary the next one.
      const std::string message = expect_refused(cut, {"truncated", "header field"});
      bool named = false;
      for (const auto& [offset, name] : kHeaderFields)
        named = named || (offset <= size && offset + 16 >= size && message.find(name) != std::string::npos);
      EXPECT_TRUE(named) << message;
    } else if (size < good_.size() - 32) {
      expect_refused(cut, {"truncated", "chunk "});
    } else {
      expect_refused(cut, {"truncated", "trailer"});
    }
  }
  expect_table_unchanged();
}

TEST_F(LoadErrors, AFlippedByteAnywhereIsCaught) {
  for (std::size_t at = 0; at < good_.size(); ++at) {
    SCOPED_TRACE("byte " + std::to_string(at));
    auto bad = good_;
    bad[at] ^= std::byte{0x10};
    std::vector<std::string> parts = {"byte "};
    if (at < 8) parts.push_back("magic");
    else if (at < 12) parts.push_back("format_version");
    else if (at < 96) parts.push_back("header");
    else if (at >= good_.size() - 8) parts.push_back("trailer file_checksum");
    else if (at >= good_.size() - 32) parts.push_back("trailer");
    else parts.push_back("chunk ");
    expect_refused(bad, parts);
  }
  expect_table_unchanged();
}

TEST_F(LoadErrors, AFlippedRowByteNamesTheChunkChecksum) {
  auto bad = good_;
  bad[96 + 16 + 8 * 4 + 8 * 4 + 5] ^= std::byte{1};  // chunk 0, its rows
  expect_refused(bad, {"byte ", "chunk 0 chunk_checksum", "damaged"});
}

TEST_F(LoadErrors, WrongMagicAndVersion) {
  auto bad = good_;
  std::memcpy(bad.data(), "PK\x03\x04zip!", 8);
  expect_refused(bad, {"byte 0", "magic", "expected \"EMBSKVTF\"", "got \"PK\\x03\\x04zip!\""});
  expect_refused(with_field<std::uint32_t>(8, 2), {"byte 8", "format_version", "expected 1", "got 2"});
  expect_refused(with_field<std::uint32_t>(8, 0), {"format_version", "got 0"});
  expect_table_unchanged();
}

TEST_F(LoadErrors, FieldsOutOfRange) {
  expect_refused(with_field<std::uint32_t>(12, 64), {"byte 12", "header_bytes", "expected 96"});
  expect_refused(with_field<std::uint8_t>(16, 7), {"byte 16", "key_type", "1 (int64), 2 (uint64)", "got 7"});
  expect_refused(with_field<std::uint8_t>(17, 0), {"byte 17", "value_type", "got 0"});
  expect_refused(with_field<std::uint8_t>(18, 9), {"byte 18", "score_strategy", "got 9"});
  expect_refused(with_field<std::uint8_t>(19, 4), {"byte 19", "flags"});
  expect_refused(with_field<std::uint32_t>(20, 0), {"byte 20", "chunk_entries"});
  expect_refused(with_field<std::uint64_t>(24, 0), {"byte 24", "dim", "[1, 2^20]"});
  expect_refused(with_field<std::uint64_t>(32, std::uint64_t{1} << 40), {"byte 32", "optimizer_width"});
  expect_refused(with_field<std::uint64_t>(48, 2), {"byte 48", "chunk_count", "expected 3"});
  expect_refused(with_field<std::uint64_t>(72, 1), {"byte 72", "reserved"});
  expect_refused(with_field<std::uint64_t>(56, 5), {"byte 56", "threshold", "full dump"});
  expect_table_unchanged();
}

TEST_F(LoadErrors, AHugeEntryCountIsATruncationNotAnAllocation) {
  auto bad = with_field<std::uint64_t>(40, std::uint64_t{1} << 60);
  const std::uint64_t chunks = ((std::uint64_t{1} << 60) + 3) / 4;
  std::memcpy(bad.data() + 48, &chunks, 8);
  reseal(bad);
  // Chunk 2, the last real one, holds 2 entries where a full 4 is now expected.
  expect_refused(bad, {"byte 532", "chunk 2 entries", "expected 4, got 2"});
  expect_refused(with_field<std::uint64_t>(40, ~std::uint64_t{0}), {"byte 40", "entry_count"});
}

// An entry count just below 2^63 with chunks of 4 (the fuzzer's find: ceil(count / chunk) once
// overflowed while checking chunk_count): the expected chunk count is computed exactly and the
// mismatch refused by its field.
TEST_F(LoadErrors, AnEntryCountNearTheLimitGivesTheExactChunkCount) {
  const std::uint64_t count = 0x7FFFFFFFFFFFFFCAULL;
  const std::string chunks = std::to_string(count / 4 + (count % 4 != 0 ? 1 : 0));
  expect_refused(with_field<std::uint64_t>(40, count), {"byte 48", "chunk_count", "expected " + chunks});
}

TEST_F(LoadErrors, AReservedKeyIsRefused) {
  const std::size_t chunk_bytes = 16 + 4 * 8 * 2 + 4 * 8 * 4 + 8;
  auto bad = good_;
  const std::uint64_t reserved = kFirstReservedKey + 1;
  std::memcpy(bad.data() + 96 + 16 + 8, &reserved, 8);  // chunk 0, key 1
  const std::uint64_t sum = checksum64(bad.data() + 96, chunk_bytes - 8);
  std::memcpy(bad.data() + 96 + chunk_bytes - 8, &sum, 8);
  reseal(bad);
  expect_refused(bad, {"byte 120", "chunk 0 key 1", "reserved"});
  expect_table_unchanged();
}

TEST_F(LoadErrors, TrailingBytes) {
  auto bad = good_;
  bad.resize(bad.size() + 8);
  expect_refused(bad, {"end of file", "8 more bytes"});
}

TEST_F(LoadErrors, AChunkMovedIsCaught) {
  // The chunk index is inside the chunk checksum; swap two whole (equal-size) chunks.
  const std::size_t chunk_bytes = 16 + 4 * 8 * 2 + 4 * 8 * 4 + 8;
  auto bad = good_;
  std::memcpy(bad.data() + 96, good_.data() + 96 + chunk_bytes, chunk_bytes);
  std::memcpy(bad.data() + 96 + chunk_bytes, good_.data() + 96, chunk_bytes);
  expect_refused(bad, {"byte 104", "chunk 0 chunk_index", "expected 0, got 1"});
}

TEST_F(LoadErrors, MismatchedTables) {
  ScratchDir dir("table_file_mismatch");
  const auto expect_mismatch = [&](auto& table, const std::string& field) {
    const auto before = snapshot(table);
    try {
      table.load(dir_ / "good");
      ADD_FAILURE() << "loaded into a table of another " << field;
    } catch (const InputError& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find((dir_ / "good").string()), std::string::npos) << message;
      EXPECT_NE(message.find(field), std::string::npos) << message;
    }
    EXPECT_EQ(snapshot(table), before);
  };
  HostKvTable<std::uint64_t> unsigned_keys(options());
  fill_random(unsigned_keys, 20, 4);
  expect_mismatch(unsigned_keys, "key type");
  auto o = options();
  o.dim = 6;
  HostKvTable<std::int64_t> wider(o);
  expect_mismatch(wider, "dim");
  o = options();
  o.optimizer_state_width = 2;
  HostKvTable<std::int64_t> other_optimizer(o);
  expect_mismatch(other_optimizer, "optimizer state width");
  o = options();
  o.training = false;
  HostKvTable<std::int64_t> eval(o);
  fill_random(eval, 20, 5);
  expect_mismatch(eval, "optimizer state width");
  o = options();
  o.score_strategy = ScoreStrategy::kLfu;
  HostKvTable<std::int64_t> lfu(o);
  expect_mismatch(lfu, "score strategy");
}

TEST_F(LoadErrors, EmptyFileDirectoryAndMissingFile) {
  expect_refused({}, {"empty"});
  expect_refused_path(dir_.path(), {"directory"});
  expect_refused_path(dir_ / "no_such_file", {"no such file"});
  expect_table_unchanged();
}

}  // namespace
}  // namespace embscale::kv
