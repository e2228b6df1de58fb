#include "workloads/trace/embscale_format.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "core/atomic_file.hpp"
#include "core/byte_io.hpp"
#include "core/checksum.hpp"
#include "core/error.hpp"
#include "core/file_input.hpp"
#include "workloads/trace/trace_checks.hpp"

namespace embscale::trace {
namespace {

constexpr char kChunkMagic[4] = {'T', 'C', 'H', 'K'};
constexpr char kIndexMagic[4] = {'T', 'I', 'D', 'X'};
constexpr char kTrailerMagic[4] = {'T', 'E', 'N', 'D'};
constexpr std::size_t kIndexFixedBytes = 16;  // magic, reserved, chunk_count
constexpr std::int64_t kAutoChunkBytes = std::int64_t{1} << 20;

std::size_t header_bytes_for(std::size_t slot_size_count) {
  return kEmbscaleTraceFixedHeaderBytes + 8 * slot_size_count + 8;
}

// The bytes of a chunk of n samples holding `keys` keys.
std::uint64_t chunk_bytes(const TraceShape& s, int key_width, std::uint64_t n, std::uint64_t keys) {
  const std::uint64_t fixed = 4 * n * static_cast<std::uint64_t>(s.num_slots + s.label_dim + s.dense_dim);
  return kEmbscaleTraceChunkHeaderBytes + padded8(fixed + keys * static_cast<std::uint64_t>(key_width)) + 8;
}

void expect_magic(ByteReader& r, const char* magic, std::size_t n, const std::string& field, const std::string& what) {
  const std::uint64_t at = r.offset();
  const std::byte* p = r.take(n, field);
  if (std::memcmp(p, magic, n) != 0)
    r.fail(at, field, quoted_bytes(reinterpret_cast<const std::byte*>(magic), n) + " (" + what + ")",
           quoted_bytes(p, n));
}

// "[1000, 20, 7]" for messages, the first 8 sizes and a count of the rest.
std::string size_list(const std::vector<std::int64_t>& sizes) {
  constexpr std::size_t kShown = 8;
  std::string out = "[";
  for (std::size_t j = 0; j < sizes.size() && j < kShown; ++j) out += (j ? ", " : "") + std::to_string(sizes[j]);
  if (sizes.size() > kShown) out += ", ... " + std::to_string(sizes.size() - kShown) + " more";
  return out + "]";
}

class EmbscaleReader final : public TraceReader {
 public:
  EmbscaleReader(const std::filesystem::path& path, const TraceReadOptions& options) : in_(path, "embscale trace") {
    read_header(options);
    read_index();
  }

  const TraceShape& shape() const override { return shape_; }
  std::int64_t position() const override { return position_; }

  void seek(std::int64_t sample) override {
    if (sample < 0 || sample > shape_.num_samples)
      throw InputError("cannot seek to sample " + std::to_string(sample) + " of embscale trace " + in_.name() +
                       ": it holds " + std::to_string(shape_.num_samples) + " samples");
    if (sample == position_) return;
    sequential_ = false;  // the file checksum needs every byte in order
    position_ = sample;
    if (loaded_ && sample >= first_[*loaded_] && sample < first_[*loaded_] + chunk_count_of(*loaded_)) return;
    loaded_.reset();
  }

  std::int64_t read(std::int64_t max_samples, Batch& out) override {
    EMBSCALE_EXPECTS(max_samples >= 0, "read a nonnegative number of samples");
    const std::int64_t n = std::min(max_samples, shape_.num_samples - position_);
    detail::begin_batch(out, shape_, position_, n);
    const auto L = static_cast<std::size_t>(shape_.label_dim), D = static_cast<std::size_t>(shape_.dense_dim);
    const auto S = static_cast<std::size_t>(shape_.num_slots);
    for (std::int64_t done = 0; done < n;) {
      const std::size_t c = chunk_of(position_);
      if (loaded_ != c) load_chunk(c);
      const auto i = static_cast<std::size_t>(position_ - first_[c]);
      const auto k =
          static_cast<std::size_t>(std::min<std::int64_t>(n - done, chunk_count_of(c) - static_cast<std::int64_t>(i)));
      out.labels.insert(out.labels.end(), labels_.begin() + i * L, labels_.begin() + (i + k) * L);
      out.dense.insert(out.dense.end(), dense_.begin() + i * D, dense_.begin() + (i + k) * D);
      const auto key_begin = static_cast<std::size_t>(bag_start_[i * S]);
      const auto key_end = static_cast<std::size_t>(bag_start_[(i + k) * S]);
      const auto shift = static_cast<std::int64_t>(out.keys.size()) - static_cast<std::int64_t>(key_begin);
      out.keys.insert(out.keys.end(), keys_.begin() + key_begin, keys_.begin() + key_end);
      for (std::size_t b = i * S + 1; b <= (i + k) * S; ++b) out.offsets.push_back(bag_start_[b] + shift);
      out.num_samples += static_cast<std::int64_t>(k);
      position_ += static_cast<std::int64_t>(k);
      done += static_cast<std::int64_t>(k);
    }
    return n;
  }

 private:
  std::int64_t chunk_count_of(std::size_t c) const {
    return (c + 1 < first_.size() ? first_[c + 1] : shape_.num_samples) - first_[c];
  }
  std::size_t chunk_of(std::int64_t sample) const {
    return static_cast<std::size_t>(std::upper_bound(first_.begin(), first_.end(), sample) - first_.begin() - 1);
  }

  void read_header(const TraceReadOptions& options) {
    const std::string& name = in_.name();
    if (in_.size() == 0)
      throw InputError(name + ": the file is empty (expected an embscale trace starting with \"EMBSTRCE\")");
    // Magic and version first: a file of another kind or version is named as such, whatever follows.
    {
      const std::byte* p = in_.take(16, "header");
      ByteReader r({p, 16}, name);
      expect_magic(r, kEmbscaleTraceMagic, 8, "header magic", "an embscale trace");
      const auto version = r.read<std::uint32_t>("header format_version");
      if (version != kEmbscaleTraceVersion)
        r.fail(8, "header format_version", std::to_string(kEmbscaleTraceVersion) + " (this build reads only that)",
               std::to_string(version));
      header_bytes_ = r.read<std::uint32_t>("header header_bytes");
      if (header_bytes_ < header_bytes_for(0) || header_bytes_ > header_bytes_for(kTraceMaxSlots) || header_bytes_ % 8)
        r.fail(12, "header header_bytes", "56 + 8 * slot_size_count (a multiple of 8 up to 56 + 8 * 2^20)",
               std::to_string(header_bytes_));
    }
    in_.seek(0);
    const std::byte* h = in_.take(header_bytes_, "header");
    header_.assign(h, h + header_bytes_);
    ByteReader r(header_, name);
    r.take(16, "header");
    std::uint64_t stored;
    std::memcpy(&stored, header_.data() + header_bytes_ - 8, 8);
    const std::uint64_t sum = checksum64(header_.data(), header_bytes_ - 8);
    if (stored != sum)
      r.fail(
          header_bytes_ - 8, "header header_checksum",
          hex(sum) + " (the checksum of bytes [0, " + std::to_string(header_bytes_ - 8) + "): the header is damaged)",
          hex(stored));
    key_bytes_ = r.read<std::uint8_t>("header key_bytes");
    if (key_bytes_ != 4 && key_bytes_ != 8) r.fail(16, "header key_bytes", "4 or 8", std::to_string(key_bytes_));
    if (r.read<std::uint8_t>("header flags") != 0) r.fail(17, "header flags", "0", "nonzero");
    if (r.read<std::uint16_t>("header reserved") != 0) r.fail(18, "header reserved", "0", "nonzero");
    const auto label_dim = r.read<std::uint32_t>("header label_dim");
    const auto dense_dim = r.read<std::uint32_t>("header dense_dim");
    const auto num_slots = r.read<std::uint32_t>("header num_slots");
    detail::check_dim(name, 20, "header label_dim", label_dim, 0, kTraceMaxDim, options.label_dim);
    detail::check_dim(name, 24, "header dense_dim", dense_dim, 0, kTraceMaxDim, options.dense_dim);
    detail::check_dim(name, 28, "header num_slots", num_slots, 1, kTraceMaxSlots, options.num_slots);
    shape_.label_dim = static_cast<std::int32_t>(label_dim);
    shape_.dense_dim = static_cast<std::int32_t>(dense_dim);
    shape_.num_slots = static_cast<std::int32_t>(num_slots);
    chunk_samples_ = r.read<std::uint32_t>("header chunk_samples");
    if (chunk_samples_ < 1 || chunk_samples_ > kEmbscaleTraceMaxChunkSamples)
      r.fail(32, "header chunk_samples", "an integer in [1, 2^24]", std::to_string(chunk_samples_));
    const auto slot_size_count = r.read<std::uint32_t>("header slot_size_count");
    if (slot_size_count != 0 && slot_size_count != num_slots)
      r.fail(36, "header slot_size_count", "0 or num_slots = " + std::to_string(num_slots),
             std::to_string(slot_size_count));
    if (header_bytes_ != header_bytes_for(slot_size_count))
      r.fail(12, "header header_bytes",
             std::to_string(header_bytes_for(slot_size_count)) + " (56 + 8 * slot_size_count)",
             std::to_string(header_bytes_));
    if (r.read<std::uint64_t>("header reserved") != 0) r.fail(40, "header reserved", "0", "nonzero");
    std::vector<std::int64_t> sizes(slot_size_count);
    for (std::uint32_t j = 0; j < slot_size_count; ++j) {
      const std::uint64_t at = r.offset();
      sizes[j] = r.read<std::int64_t>("header slot_sizes");
      if (sizes[j] < 1)
        r.fail(at, "header slot_sizes[" + std::to_string(j) + "]", "a size >= 1", std::to_string(sizes[j]));
    }
    try {
      (void)slot_offsets(sizes);
    } catch (const InputError& e) {
      throw InputError(name + ": header slot_sizes: " + e.what());
    }
    if (!options.slot_sizes.empty() && !sizes.empty() && options.slot_sizes != sizes)
      throw InputError(name + ": header slot_sizes (byte 48) " + size_list(sizes) +
                       " differ from the configured slot_size_array " + size_list(options.slot_sizes) +
                       "; set slot_size_array to the file's (the key spaces its keys were checked against)");
    shape_.slot_sizes = options.slot_sizes.empty() ? sizes : options.slot_sizes;
    rules_.emplace(shape_.slot_sizes, options.max_nnz, shape_.num_slots);
    file_checksum_.update(header_.data(), header_.size());
  }

  void read_index() {
    const std::string& name = in_.name();
    const std::uint64_t least = header_bytes_ + kIndexFixedBytes + 8 + kEmbscaleTraceTrailerBytes;
    if (in_.size() < least) throw_truncated(name, "index and trailer", header_bytes_, least, in_.size());
    const std::uint64_t trailer_at = in_.size() - kEmbscaleTraceTrailerBytes;
    in_.seek(trailer_at);
    const std::byte* t = in_.take(kEmbscaleTraceTrailerBytes, "trailer");
    std::memcpy(trailer_, t, sizeof trailer_);
    ByteReader tr({trailer_, sizeof trailer_}, name, trailer_at);
    expect_magic(tr, kTrailerMagic, 4, "trailer magic",
                 "the end of a complete embscale trace; a file cut short has none");
    if (tr.read<std::uint32_t>("trailer reserved") != 0) tr.fail(trailer_at + 4, "trailer reserved", "0", "nonzero");
    index_at_ = tr.read<std::uint64_t>("trailer index_offset");
    const auto total = tr.read<std::uint64_t>("trailer total_samples");
    file_sum_ = tr.read<std::uint64_t>("trailer file_checksum");
    if (index_at_ < header_bytes_ || index_at_ > trailer_at - kIndexFixedBytes - 8 || index_at_ % 8)
      tr.fail(trailer_at + 8, "trailer index_offset",
              "a multiple of 8 in [" + std::to_string(header_bytes_) + ", " +
                  std::to_string(trailer_at - kIndexFixedBytes - 8) + "]",
              std::to_string(index_at_));
    if (total > static_cast<std::uint64_t>(INT64_MAX))
      tr.fail(trailer_at + 16, "trailer total_samples", "a count below 2^63", std::to_string(total));
    shape_.num_samples = static_cast<std::int64_t>(total);

    // The index fills [index_at_, trailer_at): its length bounds chunk_count before any allocation.
    const auto index_bytes = static_cast<std::size_t>(trailer_at - index_at_);
    in_.seek(index_at_);
    const std::byte* p = in_.take(index_bytes, "index");
    index_.assign(p, p + index_bytes);
    ByteReader r(index_, name, index_at_);
    expect_magic(r, kIndexMagic, 4, "index magic", "the chunk index at trailer index_offset");
    if (r.read<std::uint32_t>("index reserved") != 0) r.fail(index_at_ + 4, "index reserved", "0", "nonzero");
    const auto count = r.read<std::uint64_t>("index chunk_count");
    if (count != (index_bytes - kIndexFixedBytes - 8) / 16 || (index_bytes - kIndexFixedBytes - 8) % 16)
      r.fail(index_at_ + 8, "index chunk_count",
             "(index bytes - 24) / 16 = " + std::to_string((index_bytes - kIndexFixedBytes - 8) / 16) +
                 " (the index runs from trailer index_offset to the trailer)",
             std::to_string(count));
    const std::uint64_t sum = checksum64(index_.data(), index_bytes - 8);
    std::uint64_t stored;
    std::memcpy(&stored, index_.data() + index_bytes - 8, 8);
    if (stored != sum)
      r.fail(index_at_ + index_bytes - 8, "index index_checksum", hex(sum) + " (the index is damaged)", hex(stored));
    first_.resize(count);
    offset_.resize(count);
    for (std::uint64_t c = 0; c < count; ++c) {
      const std::uint64_t at = r.offset();
      const auto first = r.read<std::uint64_t>("index entry");
      const auto offset = r.read<std::uint64_t>("index entry");
      const std::string entry = "index entry " + std::to_string(c);
      const std::uint64_t expected_first = c == 0 ? 0 : static_cast<std::uint64_t>(first_[c - 1]);
      if (c == 0 ? first != 0 : (first <= expected_first || first - expected_first > chunk_samples_))
        r.fail(at, entry + " first_sample",
               c == 0 ? "0"
                      : "previous + [1, chunk_samples] = (" + std::to_string(expected_first) + ", " +
                            std::to_string(expected_first + chunk_samples_) + "]",
               std::to_string(first));
      const std::uint64_t lowest =
          c == 0 ? header_bytes_ : static_cast<std::uint64_t>(offset_[c - 1]) + kEmbscaleTraceChunkHeaderBytes + 8;
      if (c == 0 ? offset != header_bytes_
                 : (offset < lowest || offset % 8 || offset > index_at_ - kEmbscaleTraceChunkHeaderBytes - 8))
        r.fail(at + 8, entry + " offset",
               c == 0 ? std::to_string(header_bytes_) + " (right after the header)"
                      : "a multiple of 8 in [" + std::to_string(lowest) + ", " +
                            std::to_string(index_at_ - kEmbscaleTraceChunkHeaderBytes - 8) + "]",
               std::to_string(offset));
      first_[c] = static_cast<std::int64_t>(first);
      offset_[c] = offset;
    }
    const std::uint64_t last_first = count == 0 ? 0 : static_cast<std::uint64_t>(first_.back());
    if (count == 0 ? total != 0 : (total <= last_first || total - last_first > chunk_samples_))
      tr.fail(trailer_at + 16, "trailer total_samples",
              count == 0 ? "0 (the index lists no chunk)"
                         : "the last chunk's first sample + [1, chunk_samples] = (" + std::to_string(last_first) +
                               ", " + std::to_string(last_first + chunk_samples_) + "]",
              std::to_string(total));
    if (count == 0 && index_at_ != header_bytes_)
      tr.fail(trailer_at + 8, "trailer index_offset", std::to_string(header_bytes_) + " (no chunk)",
              std::to_string(index_at_));
  }

  // Reads, checks and decodes chunk c into the members below.
  void load_chunk(std::size_t c) {
    const std::string& name = in_.name();
    const std::uint64_t at = offset_[c];
    const std::uint64_t end = c + 1 < offset_.size() ? offset_[c + 1] : index_at_;
    const auto bytes = static_cast<std::size_t>(end - at);
    const auto n = static_cast<std::uint64_t>(chunk_count_of(c));
    const std::string chunk = "chunk " + std::to_string(c) + " (samples [" + std::to_string(first_[c]) + ", " +
                              std::to_string(first_[c] + static_cast<std::int64_t>(n)) + "))";
    in_.seek(at);
    const std::byte* p = in_.take(bytes, chunk);
    ByteReader r({p, bytes}, name, at, chunk + ", which ends at the next index offset,");
    expect_magic(r, kChunkMagic, 4, chunk + " magic", "a chunk, at its index entry's offset");
    const auto count = r.read<std::uint32_t>(chunk + " sample_count");
    if (count != n)
      r.fail(at + 4, chunk + " sample_count", std::to_string(n) + " (from the index)", std::to_string(count));
    const auto index = r.read<std::uint64_t>(chunk + " chunk_index");
    if (index != c) r.fail(at + 8, chunk + " chunk_index", std::to_string(c), std::to_string(index));
    const auto first = r.read<std::uint64_t>(chunk + " first_sample");
    if (first != static_cast<std::uint64_t>(first_[c]))
      r.fail(at + 16, chunk + " first_sample", std::to_string(first_[c]) + " (from the index)", std::to_string(first));
    const auto key_count = r.read<std::uint64_t>(chunk + " key_count");
    // The chunk's length is known from the index: key_count must fill it exactly.
    const std::uint64_t fits = bytes / static_cast<std::uint64_t>(key_bytes_);
    if (key_count > fits || chunk_bytes(shape_, key_bytes_, n, key_count) != bytes)
      r.fail(at + 24, chunk + " key_count", "the count that fills the chunk's " + std::to_string(bytes) + " bytes",
             std::to_string(key_count));
    std::uint64_t stored;
    std::memcpy(&stored, p + bytes - 8, 8);
    const std::uint64_t sum = checksum64(p, bytes - 8);
    if (stored != sum)
      r.fail(at + bytes - 8, chunk + " chunk_checksum",
             hex(sum) + " (the checksum of bytes [" + std::to_string(at) + ", " + std::to_string(end - 8) +
                 "): the chunk is damaged)",
             hex(stored));
    if (sequential_ && c == next_sequential_) {
      file_checksum_.update(p, bytes);
      ++next_sequential_;
    } else {
      sequential_ = false;
    }

    const auto S = static_cast<std::size_t>(shape_.num_slots);
    const auto bags = static_cast<std::size_t>(n) * S;
    const std::uint64_t nnz_at = r.offset();
    const std::byte* nnz = r.take(4 * bags, chunk + " nnz");
    bag_start_.assign(1, 0);
    bag_start_.reserve(bags + 1);
    for (std::size_t b = 0; b < bags; ++b) {
      std::uint32_t v;
      std::memcpy(&v, nnz + 4 * b, 4);
      const std::int64_t s = first_[c] + static_cast<std::int64_t>(b / S);
      rules_->check_nnz(name, nnz_at + 4 * b, s, static_cast<std::int32_t>(b % S), v);
      bag_start_.push_back(bag_start_.back() + v);
    }
    if (static_cast<std::uint64_t>(bag_start_.back()) != key_count)
      r.fail(nnz_at, chunk + " nnz", "counts summing to key_count = " + std::to_string(key_count),
             "a sum of " + std::to_string(bag_start_.back()));
    const auto floats = [&](std::vector<float>& to, std::size_t values, const std::string& what) {
      const std::byte* f = r.take(4 * values, chunk + " " + what);
      to.resize(values);
      if (values) std::memcpy(to.data(), f, 4 * values);
    };
    floats(labels_, static_cast<std::size_t>(n) * static_cast<std::size_t>(shape_.label_dim), "labels");
    floats(dense_, static_cast<std::size_t>(n) * static_cast<std::size_t>(shape_.dense_dim), "dense");
    const std::uint64_t keys_at = r.offset();
    const std::byte* k =
        r.take(static_cast<std::size_t>(key_count) * static_cast<std::size_t>(key_bytes_), chunk + " keys");
    keys_.resize(static_cast<std::size_t>(key_count));
    for (std::size_t b = 0, i = 0; b < bags; ++b) {
      for (; i < static_cast<std::size_t>(bag_start_[b + 1]); ++i) {
        Key key;
        if (key_bytes_ == 4) {
          std::uint32_t v;
          std::memcpy(&v, k + 4 * i, 4);
          key = v;
        } else {
          std::memcpy(&key, k + 8 * i, 8);
        }
        rules_->check_key(name, keys_at + static_cast<std::uint64_t>(key_bytes_) * i,
                          first_[c] + static_cast<std::int64_t>(b / S), static_cast<std::int32_t>(b % S), key);
        keys_[i] = key;
      }
    }
    loaded_ = c;
    if (sequential_ && next_sequential_ == first_.size()) check_file_checksum();
  }

  void check_file_checksum() {
    Checksum64 sum = file_checksum_;
    sum.update(index_.data(), index_.size());
    sum.update(trailer_, kEmbscaleTraceTrailerBytes - 8);
    if (sum.value() != file_sum_)
      throw_field_error(in_.name(), in_.size() - 8, "trailer file_checksum",
                        hex(sum.value()) + " (the checksum of every byte before it: the file is damaged)",
                        hex(file_sum_));
  }

  FileInput in_;
  TraceShape shape_;
  std::optional<detail::KeyRules> rules_;
  std::uint32_t header_bytes_ = 0;
  int key_bytes_ = 8;
  std::uint32_t chunk_samples_ = 1;
  std::vector<std::byte> header_;
  std::vector<std::byte> index_;
  std::byte trailer_[kEmbscaleTraceTrailerBytes];
  std::uint64_t index_at_ = 0;
  std::uint64_t file_sum_ = 0;
  std::vector<std::int64_t> first_;    // each chunk's first sample
  std::vector<std::uint64_t> offset_;  // each chunk's byte offset
  // The loaded chunk.
  std::optional<std::size_t> loaded_;
  std::vector<std::int64_t> bag_start_;  // bags + 1 key offsets
  std::vector<float> labels_;
  std::vector<float> dense_;
  std::vector<Key> keys_;
  // Whole-file checksum, while every chunk so far was read in order from chunk 0.
  Checksum64 file_checksum_;
  bool sequential_ = true;
  std::size_t next_sequential_ = 0;
  std::int64_t position_ = 0;
};

class EmbscaleWriter final : public TraceWriter {
 public:
  EmbscaleWriter(const std::filesystem::path& path, const TraceShape& shape, const TraceWriteOptions& options)
      : path_(path), shape_(shape), key_bytes_(key_bytes(options.key_width)),
        rules_(shape.slot_sizes, 0, shape.num_slots), out_(path) {
    const std::int64_t per_sample =
        4 * (shape.num_slots + shape.label_dim + shape.dense_dim) + key_bytes_ * shape.num_slots;
    chunk_samples_ =
        options.samples_per_chunk > 0
            ? std::min(options.samples_per_chunk, kEmbscaleTraceMaxChunkSamples)
            : std::clamp<std::int64_t>(kAutoChunkBytes / std::max<std::int64_t>(per_sample, 1), 1, 1 << 16);
    std::vector<std::byte> h;
    put_bytes(h, kEmbscaleTraceMagic, 8);
    put<std::uint32_t>(h, kEmbscaleTraceVersion);
    put<std::uint32_t>(h, static_cast<std::uint32_t>(header_bytes_for(shape.slot_sizes.size())));
    put<std::uint8_t>(h, static_cast<std::uint8_t>(key_bytes_));
    put<std::uint8_t>(h, 0);
    put<std::uint16_t>(h, 0);
    put<std::uint32_t>(h, static_cast<std::uint32_t>(shape.label_dim));
    put<std::uint32_t>(h, static_cast<std::uint32_t>(shape.dense_dim));
    put<std::uint32_t>(h, static_cast<std::uint32_t>(shape.num_slots));
    put<std::uint32_t>(h, static_cast<std::uint32_t>(chunk_samples_));
    put<std::uint32_t>(h, static_cast<std::uint32_t>(shape.slot_sizes.size()));
    put<std::uint64_t>(h, 0);
    for (const std::int64_t s : shape.slot_sizes) put<std::int64_t>(h, s);
    put<std::uint64_t>(h, checksum64(h.data(), h.size()));
    emit(h);
  }

  void write(const Batch& b) override {
    detail::check_batch_for_writer(b, shape_, path_.string());
    const auto L = static_cast<std::size_t>(shape_.label_dim), D = static_cast<std::size_t>(shape_.dense_dim);
    for (std::int64_t i = 0; i < b.num_samples; ++i) {
      const std::int64_t s = written_ + pending_;
      const auto row = static_cast<std::size_t>(i);
      labels_.insert(labels_.end(), b.labels.begin() + row * L, b.labels.begin() + (row + 1) * L);
      dense_.insert(dense_.end(), b.dense.begin() + row * D, b.dense.begin() + (row + 1) * D);
      for (std::int32_t j = 0; j < shape_.num_slots; ++j) {
        const auto bag = b.bag(i * shape_.num_slots + j);
        if (bag.size() > 0xFFFFFFFFu)
          throw InputError("cannot write " + path_.string() + ": sample " + std::to_string(s) + " slot " +
                           std::to_string(j) + " holds more than 2^32 - 1 keys");
        nnz_.push_back(static_cast<std::uint32_t>(bag.size()));
        for (const Key k : bag) {
          rules_.check_key_to_write(path_.string(), s, j, k);
          if (key_bytes_ == 4) {
            if (k < 0 || k > 0xFFFFFFFFLL)
              throw InputError("cannot write " + path_.string() + ": sample " + std::to_string(s) + " slot " +
                               std::to_string(j) + " key " + std::to_string(k) +
                               " does not fit 4-byte keys (uint32); write 8-byte keys");
            put<std::uint32_t>(keys_, static_cast<std::uint32_t>(k));
          } else {
            put<std::int64_t>(keys_, k);
          }
        }
      }
      if (++pending_ == chunk_samples_) flush_chunk();
    }
  }

  void close() override {
    if (pending_ > 0) flush_chunk();
    const std::uint64_t index_at = out_.bytes_written();
    std::vector<std::byte> index;
    put_bytes(index, kIndexMagic, 4);
    put<std::uint32_t>(index, 0);
    put<std::uint64_t>(index, chunk_first_.size());
    for (std::size_t c = 0; c < chunk_first_.size(); ++c) {
      put<std::uint64_t>(index, static_cast<std::uint64_t>(chunk_first_[c]));
      put<std::uint64_t>(index, chunk_offset_[c]);
    }
    put<std::uint64_t>(index, checksum64(index.data(), index.size()));
    emit(index);
    std::vector<std::byte> trailer;
    put_bytes(trailer, kTrailerMagic, 4);
    put<std::uint32_t>(trailer, 0);
    put<std::uint64_t>(trailer, index_at);
    put<std::uint64_t>(trailer, static_cast<std::uint64_t>(written_));
    file_checksum_.update(trailer.data(), trailer.size());
    put<std::uint64_t>(trailer, file_checksum_.value());
    out_.write(trailer);
    out_.commit();
  }

  std::int64_t samples_written() const override { return written_ + pending_; }

 private:
  void emit(const std::vector<std::byte>& bytes) {
    file_checksum_.update(bytes.data(), bytes.size());
    out_.write(bytes);
  }

  void flush_chunk() {
    chunk_first_.push_back(written_);
    chunk_offset_.push_back(out_.bytes_written());
    const std::uint64_t key_count = keys_.size() / static_cast<std::size_t>(key_bytes_);
    chunk_.clear();
    put_bytes(chunk_, kChunkMagic, 4);
    put<std::uint32_t>(chunk_, static_cast<std::uint32_t>(pending_));
    put<std::uint64_t>(chunk_, chunk_first_.size() - 1);
    put<std::uint64_t>(chunk_, static_cast<std::uint64_t>(written_));
    put<std::uint64_t>(chunk_, key_count);
    put_bytes(chunk_, nnz_.data(), 4 * nnz_.size());
    put_bytes(chunk_, labels_.data(), 4 * labels_.size());
    put_bytes(chunk_, dense_.data(), 4 * dense_.size());
    put_bytes(chunk_, keys_.data(), keys_.size());
    chunk_.resize(padded8(chunk_.size()), std::byte{0});
    put<std::uint64_t>(chunk_, checksum64(chunk_.data(), chunk_.size()));
    emit(chunk_);
    written_ += pending_;
    pending_ = 0;
    nnz_.clear();
    labels_.clear();
    dense_.clear();
    keys_.clear();
  }

  std::filesystem::path path_;
  TraceShape shape_;
  int key_bytes_;
  detail::KeyRules rules_;
  AtomicFile out_;
  std::int64_t chunk_samples_ = 1;
  Checksum64 file_checksum_;
  // The chunk being gathered.
  std::int64_t pending_ = 0;
  std::vector<std::uint32_t> nnz_;
  std::vector<float> labels_;
  std::vector<float> dense_;
  std::vector<std::byte> keys_;
  std::vector<std::byte> chunk_;
  std::vector<std::int64_t> chunk_first_;
  std::vector<std::uint64_t> chunk_offset_;
  std::int64_t written_ = 0;  // samples in chunks already written
};

}  // namespace

std::unique_ptr<TraceReader> open_embscale_reader(const std::filesystem::path& path, const TraceReadOptions& options) {
  return std::make_unique<EmbscaleReader>(path, options);
}

std::unique_ptr<TraceWriter> open_embscale_writer(const std::filesystem::path& path, const TraceShape& shape,
                                                  const TraceWriteOptions& options) {
  detail::check_shape_for_writer(shape, path.string());
  return std::make_unique<EmbscaleWriter>(path, shape, options);
}

}  // namespace embscale::trace
