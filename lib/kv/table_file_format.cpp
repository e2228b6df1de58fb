#include "kv/table_file_format.hpp"

#include <cstring>

#include "core/byte_io.hpp"
#include "core/error.hpp"
#include "kv/host_table.hpp"
#include "kv/row_codec.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv {
namespace {

constexpr char kChunkMagic[4] = {'C', 'H', 'N', 'K'};
constexpr char kTrailerMagic[4] = {'T', 'E', 'N', 'D'};
constexpr std::size_t kHeaderChecksumOffset = 88;

std::size_t row_bytes(const TableFileHeader& h) noexcept {
  return static_cast<std::size_t>(h.row_width()) * value_bytes(h.value_type);
}

template <typename Enum, typename Values>
Enum decode_enum(ByteReader& r, std::size_t offset, std::uint8_t code, const std::string& field, const Values& values,
                 std::uint8_t (*encode)(Enum), std::string (*name)(Enum)) {
  std::string expected;
  for (const Enum v : values) {
    if (encode(v) == code) return v;
    expected += (expected.empty() ? "" : ", ") + std::to_string(encode(v)) + " (" + name(v) + ")";
  }
  r.fail(offset, field, "one of " + expected, std::to_string(code));
}

constexpr KeyType kKeyTypes[] = {KeyType::kInt64, KeyType::kUint64};
constexpr ValueType kValueTypes[] = {ValueType::kFloat32, ValueType::kFloat16, ValueType::kBFloat16};

std::string value_type_name(ValueType t) { return to_string(t); }
std::string strategy_name(ScoreStrategy s) { return to_string(s); }
std::string key_type_name(KeyType t) { return to_string(t); }

}  // namespace

std::uint8_t key_type_code(KeyType t) noexcept {
  switch (t) {
    case KeyType::kInt64: return 1;
    case KeyType::kUint64: return 2;
  }
  return 0;  // not a key type
}
std::uint8_t value_type_code(ValueType t) noexcept { return static_cast<std::uint8_t>(static_cast<int>(t) + 1); }
std::uint8_t score_strategy_code(ScoreStrategy s) noexcept { return score_rules(s).file_code; }
std::string to_string(KeyType t) {
  switch (t) {
    case KeyType::kInt64: return "int64";
    case KeyType::kUint64: return "uint64";
  }
  return "?";
}

std::size_t table_file_chunk_bytes(const TableFileHeader& h, std::int64_t n) noexcept {
  const auto count = static_cast<std::size_t>(n);
  return kTableFileChunkHeaderBytes + 16 * count + padded8(count * row_bytes(h)) + 8;
}

std::size_t table_file_bytes(const TableFileHeader& h) noexcept {
  const std::int64_t full = h.entry_count / h.chunk_entries;
  const std::int64_t last = h.entry_count % h.chunk_entries;
  std::size_t bytes = kTableFileHeaderBytes + kTableFileTrailerBytes;
  bytes += static_cast<std::size_t>(full) * table_file_chunk_bytes(h, h.chunk_entries);
  if (last) bytes += table_file_chunk_bytes(h, last);
  return bytes;
}

// ---- writing ---------------------------------------------------------------------------------

TableFileEncoder::TableFileEncoder(const TableFileHeader& header) : header_(header) {
  EMBSCALE_EXPECTS(header.dim >= 1 && header.dim <= kTableFileMaxDim, "dim out of the file format's range");
  EMBSCALE_EXPECTS(header.optimizer_width >= 0 && header.optimizer_width <= kTableFileMaxDim,
                   "optimizer width out of the file format's range");
  EMBSCALE_EXPECTS(header.chunk_entries >= 1 && header.chunk_entries <= kTableFileMaxChunkEntries,
                   "chunk_entries out of the file format's range");
  EMBSCALE_EXPECTS(header.entry_count >= 0, "a negative entry count");
}

std::span<const std::byte> TableFileEncoder::emit() {
  file_checksum_.update(buffer_);
  return buffer_;
}

std::span<const std::byte> TableFileEncoder::header() {
  EMBSCALE_EXPECTS(stage_ == 0, "the header is written first, once");
  const TableFileHeader& h = header_;
  buffer_.clear();
  put_bytes(buffer_, kTableFileMagic, sizeof kTableFileMagic);
  put<std::uint32_t>(buffer_, kTableFileVersion);
  put<std::uint32_t>(buffer_, static_cast<std::uint32_t>(kTableFileHeaderBytes));
  put<std::uint8_t>(buffer_, key_type_code(h.key_type));
  put<std::uint8_t>(buffer_, value_type_code(h.value_type));
  put<std::uint8_t>(buffer_, score_strategy_code(h.score_strategy));
  put<std::uint8_t>(buffer_, h.incremental ? 1 : 0);
  put<std::uint32_t>(buffer_, static_cast<std::uint32_t>(h.chunk_entries));
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(h.dim));
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(h.optimizer_width));
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(h.entry_count));
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(h.chunk_count()));
  put<std::uint64_t>(buffer_, h.threshold);
  put<std::uint64_t>(buffer_, h.next_threshold);
  put<std::uint64_t>(buffer_, 0);
  put<std::uint64_t>(buffer_, 0);
  put<std::uint64_t>(buffer_, checksum64(buffer_.data(), buffer_.size()));
  EMBSCALE_EXPECTS(buffer_.size() == kTableFileHeaderBytes, "header layout");
  stage_ = 1;
  return emit();
}

std::span<const std::byte> TableFileEncoder::chunk(std::span<const std::uint64_t> keys,
                                                   std::span<const std::uint64_t> scores,
                                                   std::span<const std::byte> rows) {
  EMBSCALE_EXPECTS(stage_ == 1, "chunks come between the header and the trailer");
  const auto n = static_cast<std::int64_t>(keys.size());
  const std::int64_t expected = std::min(header_.chunk_entries, header_.entry_count - entries_done_);
  EMBSCALE_EXPECTS(n == expected, "a chunk holds chunk_entries entries (the last one the rest): expected " +
                                      std::to_string(expected) + ", got " + std::to_string(n));
  EMBSCALE_EXPECTS(scores.size() == keys.size() && rows.size() == keys.size() * row_bytes(header_),
                   "a chunk's keys, scores and rows disagree");
  buffer_.clear();
  buffer_.reserve(table_file_chunk_bytes(header_, n));
  put_bytes(buffer_, kChunkMagic, sizeof kChunkMagic);
  put<std::uint32_t>(buffer_, static_cast<std::uint32_t>(n));
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(chunks_done_));
  put_bytes(buffer_, keys.data(), keys.size_bytes());
  put_bytes(buffer_, scores.data(), scores.size_bytes());
  put_bytes(buffer_, rows.data(), rows.size());
  buffer_.resize(padded8(buffer_.size()), std::byte{0});
  put<std::uint64_t>(buffer_, checksum64(buffer_.data(), buffer_.size()));
  entries_done_ += n;
  ++chunks_done_;
  return emit();
}

std::span<const std::byte> TableFileEncoder::trailer() {
  EMBSCALE_EXPECTS(stage_ == 1 && entries_done_ == header_.entry_count,
                   "the trailer follows all entry_count entries: " + std::to_string(entries_done_) + " of " +
                       std::to_string(header_.entry_count) + " given");
  buffer_.clear();
  put_bytes(buffer_, kTrailerMagic, sizeof kTrailerMagic);
  put<std::uint32_t>(buffer_, 0);
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(entries_done_));
  put<std::uint64_t>(buffer_, static_cast<std::uint64_t>(chunks_done_));
  file_checksum_.update(buffer_);
  put<std::uint64_t>(buffer_, file_checksum_.value());
  stage_ = 2;
  return std::span<const std::byte>(buffer_);
}

// ---- reading ---------------------------------------------------------------------------------

TableFileContents parse_table_file(std::span<const std::byte> bytes, const std::string& name) {
  ByteReader r(bytes, name);
  TableFileContents out;
  TableFileHeader& h = out.header;

  if (bytes.empty()) throw InputError(name + ": the file is empty (expected a table dump starting with \"EMBSKVTF\")");
  // Magic and version first: a file of another kind or version is named as such, whatever follows.
  const std::byte* magic = r.take(sizeof kTableFileMagic, "header field magic");
  if (std::memcmp(magic, kTableFileMagic, sizeof kTableFileMagic) != 0)
    r.fail(0, "header field magic",
           quoted_bytes(reinterpret_cast<const std::byte*>(kTableFileMagic), 8) + " (an embscale table dump)",
           quoted_bytes(magic, 8));
  const auto version = r.read<std::uint32_t>("header field format_version");
  if (version != kTableFileVersion)
    r.fail(8, "header field format_version", std::to_string(kTableFileVersion) + " (this build reads only that)",
           std::to_string(version));
  const auto header_bytes = r.read<std::uint32_t>("header field header_bytes");
  const auto key_code = r.read<std::uint8_t>("header field key_type");
  const auto value_code = r.read<std::uint8_t>("header field value_type");
  const auto strategy_code = r.read<std::uint8_t>("header field score_strategy");
  const auto flags = r.read<std::uint8_t>("header field flags");
  const auto chunk_entries = r.read<std::uint32_t>("header field chunk_entries");
  const auto dim = r.read<std::uint64_t>("header field dim");
  const auto optimizer_width = r.read<std::uint64_t>("header field optimizer_width");
  const auto entry_count = r.read<std::uint64_t>("header field entry_count");
  const auto chunk_count = r.read<std::uint64_t>("header field chunk_count");
  h.threshold = r.read<std::uint64_t>("header field threshold");
  h.next_threshold = r.read<std::uint64_t>("header field next_threshold");
  const auto reserved0 = r.read<std::uint64_t>("header field reserved");
  const auto reserved1 = r.read<std::uint64_t>("header field reserved");
  const auto header_checksum = r.read<std::uint64_t>("header field header_checksum");
  const std::uint64_t computed = checksum64(bytes.data(), kHeaderChecksumOffset);
  if (header_checksum != computed)
    r.fail(kHeaderChecksumOffset, "header field header_checksum",
           hex(computed) + " (the checksum of bytes [0, 88): the header is damaged)", hex(header_checksum));

  if (header_bytes != kTableFileHeaderBytes)
    r.fail(12, "header field header_bytes", std::to_string(kTableFileHeaderBytes), std::to_string(header_bytes));
  h.key_type = decode_enum(r, 16, key_code, "header field key_type", kKeyTypes, key_type_code, key_type_name);
  h.value_type =
      decode_enum(r, 17, value_code, "header field value_type", kValueTypes, value_type_code, value_type_name);
  h.score_strategy = decode_enum(r, 18, strategy_code, "header field score_strategy", kScoreStrategies,
                                 score_strategy_code, strategy_name);
  if (flags > 1) r.fail(19, "header field flags", "0 or 1 (bit 0: incremental)", std::to_string(flags));
  h.incremental = flags == 1;
  if (chunk_entries < 1 || chunk_entries > kTableFileMaxChunkEntries)
    r.fail(20, "header field chunk_entries", "an integer in [1, 2^24]", std::to_string(chunk_entries));
  h.chunk_entries = chunk_entries;
  if (dim < 1 || dim > static_cast<std::uint64_t>(kTableFileMaxDim))
    r.fail(24, "header field dim", "an integer in [1, 2^20]", std::to_string(dim));
  h.dim = static_cast<std::int64_t>(dim);
  if (optimizer_width > static_cast<std::uint64_t>(kTableFileMaxDim))
    r.fail(32, "header field optimizer_width", "an integer in [0, 2^20]", std::to_string(optimizer_width));
  h.optimizer_width = static_cast<std::int64_t>(optimizer_width);
  if (reserved0 != 0 || reserved1 != 0) r.fail(72, "header field reserved", "0", "nonzero bytes");
  if (!h.incremental && h.threshold != 0)
    r.fail(56, "header field threshold", "0 in a full dump (flags bit 0 clear)", std::to_string(h.threshold));

  h.entry_count = static_cast<std::int64_t>(entry_count & 0x7FFFFFFFFFFFFFFFULL);
  if (entry_count != static_cast<std::uint64_t>(h.entry_count))
    r.fail(40, "header field entry_count", "an integer below 2^63", std::to_string(entry_count));
  if (chunk_count != static_cast<std::uint64_t>(h.chunk_count()))
    r.fail(48, "header field chunk_count", std::to_string(h.chunk_count()) + " (ceil(entry_count / chunk_entries))",
           std::to_string(chunk_count));

  // Entries are appended chunk by chunk, as their bytes are found: a count larger than the file
  // can hold is reported as the truncation of the chunk where the bytes run out, and nothing is
  // allocated for bytes that are not there. Reserved up front only when the file is big enough.
  const auto width = static_cast<std::size_t>(h.row_width());
  if (static_cast<std::size_t>(h.entry_count) <= bytes.size() / 16 && table_file_bytes(h) == bytes.size()) {
    out.keys.reserve(static_cast<std::size_t>(h.entry_count));
    out.scores.reserve(static_cast<std::size_t>(h.entry_count));
    out.values.reserve(static_cast<std::size_t>(h.entry_count) * width);
  }
  std::size_t done = 0;
  for (std::int64_t c = 0; c < h.chunk_count(); ++c) {
    const std::string chunk = "chunk " + std::to_string(c);
    const std::size_t start = r.offset();
    const auto n =
        static_cast<std::size_t>(std::min<std::int64_t>(h.chunk_entries, h.entry_count - c * h.chunk_entries));
    const std::byte* cmagic = r.take(4, chunk + " magic");
    if (std::memcmp(cmagic, kChunkMagic, 4) != 0) r.fail(start, chunk + " magic", "\"CHNK\"", quoted_bytes(cmagic, 4));
    const auto entries = r.read<std::uint32_t>(chunk + " entries");
    if (entries != n) r.fail(start + 4, chunk + " entries", std::to_string(n), std::to_string(entries));
    const auto index = r.read<std::uint64_t>(chunk + " chunk_index");
    if (index != static_cast<std::uint64_t>(c))
      r.fail(start + 8, chunk + " chunk_index", std::to_string(c), std::to_string(index));
    const std::byte* keys = r.take(8 * n, chunk + " keys");
    const std::byte* scores = r.take(8 * n, chunk + " scores");
    const std::size_t rows_bytes = n * row_bytes(h);
    const std::byte* rows = r.take(padded8(rows_bytes), chunk + " rows");
    const std::size_t checksum_at = r.offset();
    const auto stored = r.read<std::uint64_t>(chunk + " chunk_checksum");
    const std::uint64_t sum = checksum64(bytes.data() + start, checksum_at - start);
    if (stored != sum)
      r.fail(checksum_at, chunk + " chunk_checksum",
             hex(sum) + " (the checksum of bytes [" + std::to_string(start) + ", " + std::to_string(checksum_at) +
                 "): the chunk is damaged)",
             hex(stored));
    out.keys.resize(done + n);
    out.scores.resize(done + n);
    out.values.resize((done + n) * width);
    std::memcpy(out.keys.data() + done, keys, 8 * n);
    std::memcpy(out.scores.data() + done, scores, 8 * n);
    for (std::size_t i = 0; i < n; ++i)
      if (out.keys[done + i] >= kFirstReservedKey)
        r.fail(start + kTableFileChunkHeaderBytes + 8 * i, chunk + " key " + std::to_string(i),
               "a key that is not reserved (uint64 below 2^64-3, int64 not in -3..-1)", hex(out.keys[done + i]));
    decode_values(h.value_type, rows, out.values.data() + done * width, n * width);
    done += n;
  }

  const std::size_t trailer = r.offset();
  const std::byte* tmagic = r.take(4, "trailer magic");
  if (std::memcmp(tmagic, kTrailerMagic, 4) != 0)
    r.fail(trailer, "trailer magic", "\"TEND\" after " + std::to_string(h.chunk_count()) + " chunks",
           quoted_bytes(tmagic, 4));
  const auto treserved = r.read<std::uint32_t>("trailer reserved");
  if (treserved != 0) r.fail(trailer + 4, "trailer reserved", "0", std::to_string(treserved));
  const auto tcount = r.read<std::uint64_t>("trailer entry_count");
  if (tcount != entry_count)
    r.fail(trailer + 8, "trailer entry_count", std::to_string(entry_count), std::to_string(tcount));
  const auto tchunks = r.read<std::uint64_t>("trailer chunk_count");
  if (tchunks != chunk_count)
    r.fail(trailer + 16, "trailer chunk_count", std::to_string(chunk_count), std::to_string(tchunks));
  const std::size_t file_sum_at = r.offset();
  const auto file_sum = r.read<std::uint64_t>("trailer file_checksum");
  const std::uint64_t whole = checksum64(bytes.data(), file_sum_at);
  if (file_sum != whole)
    r.fail(file_sum_at, "trailer file_checksum",
           hex(whole) + " (the checksum of bytes [0, " + std::to_string(file_sum_at) + "))", hex(file_sum));
  if (r.left() != 0)
    r.fail(r.offset(), "end of file", "the end after the trailer", std::to_string(r.left()) + " more bytes");
  return out;
}

}  // namespace embscale::kv
