#include "workloads/trace/norm_format.hpp"

#include <cstring>
#include <optional>
#include <string>

#include "core/atomic_file.hpp"
#include "core/byte_io.hpp"
#include "core/error.hpp"
#include "core/file_input.hpp"
#include "workloads/trace/trace_checks.hpp"

namespace embscale::trace {
namespace {

using detail::sample_field;
using detail::slot_field;

std::uint8_t byte_sum(const std::byte* p, std::size_t n) noexcept {
  unsigned sum = 0;
  for (std::size_t i = 0; i < n; ++i) sum += static_cast<unsigned>(p[i]);
  return static_cast<std::uint8_t>(sum);
}

struct NormHeader {
  bool checksum = false;
  std::int64_t records = 0;
  std::int32_t label_dim = 0;
  std::int32_t dense_dim = 0;
  std::int32_t slot_num = 0;
};

// The smallest sample: its floats and one nnz per slot (all nnz 0), plus the wrapper.
std::uint64_t min_sample_bytes(const NormHeader& h) {
  return 4 * static_cast<std::uint64_t>(h.label_dim + h.dense_dim + h.slot_num) + (h.checksum ? 5 : 0);
}

// Reads and validates the header (wrapped in checksum mode). `expected` holds the dims a file
// must have (configured, or the list's first file's), `expected_by` says which.
NormHeader read_header(FileInput& in, const TraceReadOptions& expected, const std::string& expected_by) {
  const std::string& name = in.name();
  NormHeader h;
  if (in.size() == 0) throw InputError(name + ": the file is empty (expected a Norm data file's 64-byte header)");
  std::uint64_t base = 0;
  if (in.size() >= 4) {
    const auto length = in.read<std::int32_t>("header");
    in.seek(0);
    // A plain file starts with error_check 0 (8 zero bytes), a checksum file with the int 64.
    if (length == kNormChecksumLength) {
      h.checksum = true;
      in.seek(4);
      base = 4;
    }
  }
  const std::byte* p = in.take(kNormHeaderBytes, "header");
  std::int64_t f[5];
  std::memcpy(f, p, sizeof f);
  if (h.checksum) {
    const std::uint8_t sum = byte_sum(p, kNormHeaderBytes);
    const auto stored = in.read<std::uint8_t>("header checkbits");
    if (stored != sum)
      throw_field_error(name, base + kNormHeaderBytes, "header checkbits",
                        std::to_string(sum) + " (the sum of the header's 64 bytes modulo 256)", std::to_string(stored));
  }
  const std::int64_t mode = h.checksum ? 1 : 0;
  if (expected.norm_checksum && *expected.norm_checksum != h.checksum)
    throw_field_error(name, 0, "checksum mode",
                      *expected.norm_checksum ? "a checksum-mode file (\"check\": \"Sum\"), which opens with the int 64"
                                              : "a file without checksums (\"check\": \"None\"), which opens with the "
                                                "long long error_check 0",
                      std::string(h.checksum ? "a checksum-mode file: set \"check\": \"Sum\""
                                             : "a file without checksums: set \"check\": \"None\""));
  if (f[0] != mode)
    throw_field_error(name, base, "header error_check",
                      h.checksum ? "1 (the file opens with the int 64 of checksum mode)"
                                 : "0 (no checksum), or checksum mode: the int 64, then the header with error_check 1",
                      std::to_string(f[0]));
  detail::check_dim(name, base + 16, "header label_dim", f[2], 0, kTraceMaxDim, expected.label_dim, expected_by);
  detail::check_dim(name, base + 24, "header dense_dim", f[3], 0, kTraceMaxDim, expected.dense_dim, expected_by);
  detail::check_dim(name, base + 32, "header slot_num", f[4], 1, kTraceMaxSlots, expected.num_slots, expected_by);
  h.label_dim = static_cast<std::int32_t>(f[2]);
  h.dense_dim = static_cast<std::int32_t>(f[3]);
  h.slot_num = static_cast<std::int32_t>(f[4]);
  const std::uint64_t fit = in.left() / min_sample_bytes(h);
  if (f[1] < 0 || static_cast<std::uint64_t>(f[1]) > fit)
    throw_field_error(name, base + 8, "header number_of_records",
                      "a count in [0, " + std::to_string(fit) + "] (the samples that fit in the file's remaining " +
                          std::to_string(in.left()) + " bytes)",
                      std::to_string(f[1]));
  h.records = f[1];
  return h;
}

// Samples of the first non-empty file that key-width detection reads with each width.
constexpr std::int64_t kWidthProbeSamples = 64;

class NormReader final : public TraceReader {
 public:
  // Checks every file's header; the key width is options.norm_key_width, or I32 until
  // choose_key_width() detects it.
  NormReader(const std::vector<std::filesystem::path>& files, const TraceReadOptions& options)
      : files_(files), options_(options), width_(options.norm_key_width.value_or(KeyWidth::kI32)) {
    EMBSCALE_EXPECTS(!files.empty(), "a Norm trace has at least one file");
    // Every header now: the total count is known up front and a bad file fails before any sample.
    TraceReadOptions expected = options;
    std::string expected_by = "as configured";
    for (std::size_t i = 0; i < files_.size(); ++i) {
      FileInput in(files_[i], "Norm data file");
      const NormHeader h = read_header(in, expected, expected_by);
      if (i == 0) {
        shape_.label_dim = h.label_dim;
        shape_.dense_dim = h.dense_dim;
        shape_.num_slots = h.slot_num;
        expected.label_dim = h.label_dim;
        expected.dense_dim = h.dense_dim;
        expected.num_slots = h.slot_num;
        expected_by = "as in the list's first file " + files_[0].string();
      }
      shape_.num_samples += h.records;
      records_.push_back(h.records);
    }
    shape_.slot_sizes = options.slot_sizes;
    rules_.emplace(options.slot_sizes, options.max_nnz, shape_.num_slots);
  }

  const TraceShape& shape() const override { return shape_; }
  std::int64_t position() const override { return position_; }
  std::vector<std::string> notes() const override { return notes_; }
  void seek(std::int64_t sample) override {
    if (sample == position_) return;
    throw InputError("cannot seek to sample " + std::to_string(sample) + " of the Norm trace " + files_[0].string() +
                     ": Norm samples have variable length and no index; convert the trace to the embscale format, "
                     "which seeks");
  }

  std::int64_t read(std::int64_t max_samples, Batch& out) override {
    EMBSCALE_EXPECTS(max_samples >= 0, "read a nonnegative number of samples");
    const std::int64_t n = std::min(max_samples, shape_.num_samples - position_);
    detail::begin_batch(out, shape_, position_, n);
    try {
      for (std::int64_t i = 0; i < n; ++i) {
        while (!in_ || left_in_file_ == 0) next_file();
        read_sample(out);
        --left_in_file_;
        ++position_;
        ++out.num_samples;
        if (left_in_file_ == 0) expect_end_of_file();
      }
    } catch (const InputError& e) {
      throw InputError(e.what() + width_hint());
    }
    return n;
  }

  // Key width (the file does not record it): the given one, else the one with which the first
  // kWidthProbeSamples samples of the first non-empty file read consistently (fields in range,
  // keys in their key spaces, checksum lengths exact, the file ending where its last sample does
  // when the probe reaches it). Both: I32, HugeCTR's default. Neither: the one that read further,
  // so that the error the caller then gets is the file's, not the width's.
  void choose_key_width() {
    if (options_.norm_key_width) return;
    std::size_t f = 0;
    while (f < files_.size() && records_[f] == 0) ++f;
    if (f == files_.size()) return;  // no sample, no key: the width does not matter
    const Probe i32 = probe(files_[f], KeyWidth::kI32), i64 = probe(files_[f], KeyWidth::kI64);
    const std::string what =
        "the first " + std::to_string(std::min(records_[f], kWidthProbeSamples)) + " samples of " + files_[f].string();
    if (i32.consistent && i64.consistent) {
      width_ = KeyWidth::kI32;
      notes_.push_back("Norm keys read as I32, HugeCTR's default input_key_type: " + what +
                       " read with either width; set the key type to I64 (solver.input_key_type, --key-type) if "
                       "the file holds 64-bit keys");
    } else if (i32.consistent || i64.consistent) {
      width_ = i32.consistent ? KeyWidth::kI32 : KeyWidth::kI64;
      notes_.push_back("Norm keys read as " + to_string(width_) + ", detected: " + what + " read only with " +
                       (i32.consistent ? "32" : "64") + "-bit keys");
    } else {
      width_ = i64.further_than(i32) ? KeyWidth::kI64 : KeyWidth::kI32;
      undetected_ = "; neither I32 nor I64 keys read " + what + " (read as " + to_string(width_) +
                    ", which got further): the file is damaged, or not a Norm data file";
    }
  }

 private:
  // How far reading a file with one key width got.
  struct Probe {
    bool consistent = false;
    std::int64_t samples = 0;  // parsed before the failure
    std::uint64_t offset = 0;  // where the failure was found
    bool further_than(const Probe& o) const { return samples != o.samples ? samples > o.samples : offset > o.offset; }
  };

  Probe probe(const std::filesystem::path& file, KeyWidth width) const {
    TraceReadOptions options = options_;
    options.norm_key_width = width;
    NormReader reader({file}, options);
    reader.hints_ = false;  // a probe's failure is an answer, not an error to explain
    Batch scratch;
    try {
      reader.read(std::min(reader.shape_.num_samples, kWidthProbeSamples), scratch);
      return {true, reader.position_, 0};
    } catch (const InputError&) {
      return {false, reader.position_, reader.in_ ? reader.in_->offset() : 0};
    }
  }

  // The likely fix of a read error, appended to its message: with a given width, the other one
  // when the file reads consistently with it.
  std::string width_hint() const {
    if (!hints_) return "";
    if (!undetected_.empty()) return undetected_;
    if (!options_.norm_key_width || next_file_ == 0) return "";
    const KeyWidth other = width_ == KeyWidth::kI32 ? KeyWidth::kI64 : KeyWidth::kI32;
    const auto& file = files_[next_file_ - 1];
    if (!probe(file, other).consistent) return "";
    const std::string o = to_string(other);
    return "; " + file.string() + " reads consistently with " + o + " keys, not the " + to_string(width_) +
           " it was read with: set the key type to " + o + " (`--key-type " + o +
           "` of embscale trace, solver.input_key_type \"" + o + "\" in a config)";
  }

  void next_file() {
    EMBSCALE_EXPECTS(next_file_ < files_.size(), "samples remain but no file does");
    in_.emplace(files_[next_file_++], "Norm data file");
    header_ = read_header(*in_, options_, "as configured");  // dims were checked at open; the file may have changed
    if (header_.label_dim != shape_.label_dim || header_.dense_dim != shape_.dense_dim ||
        header_.slot_num != shape_.num_slots)
      throw InputError(in_->name() + ": the header changed since the trace was opened");
    left_in_file_ = header_.records;
    sample_in_file_ = 0;
    if (left_in_file_ == 0) expect_end_of_file();
  }

  void expect_end_of_file() {
    if (in_->left() != 0)
      throw_field_error(in_->name(), in_->offset(), "end of file",
                        "the end after number_of_records = " + std::to_string(header_.records) + " samples",
                        std::to_string(in_->left()) + " more bytes");
  }

  // One sample's fields from `r` (the file, or a checksum-mode sample's bytes) appended to out.
  // Samples are numbered within their file in messages (the file is named with them).
  template <typename Cursor> void parse_sample(Cursor& r, std::int64_t s, Batch& out) {
    const std::string& name = in_->name();
    const auto floats = [&](std::vector<float>& to, std::int32_t count, const char* what) {
      const std::byte* p = r.take(4 * static_cast<std::size_t>(count), sample_field(s, what));
      const std::size_t at = to.size();
      to.resize(at + static_cast<std::size_t>(count));
      if (count) std::memcpy(to.data() + at, p, 4 * static_cast<std::size_t>(count));
    };
    floats(out.labels, shape_.label_dim, "labels");
    floats(out.dense, shape_.dense_dim, "dense");
    const int kb = key_bytes(width_);
    for (std::int32_t j = 0; j < shape_.num_slots; ++j) {
      const std::uint64_t nnz_at = r.offset();
      const auto nnz = r.template read<std::int32_t>(slot_field(s, j, "nnz"));
      rules_->check_nnz(name, nnz_at, s, j, nnz);
      const std::uint64_t keys_at = r.offset();
      // take() checks the bytes are there before anything grows: a corrupted nnz is a truncation.
      const std::byte* p =
          r.take(static_cast<std::size_t>(nnz) * static_cast<std::size_t>(kb), slot_field(s, j, "keys"));
      for (std::int32_t k = 0; k < nnz; ++k) {
        Key key;
        if (kb == 4) {
          std::uint32_t v;
          std::memcpy(&v, p + 4 * k, 4);
          key = v;
        } else {
          std::memcpy(&key, p + 8 * k, 8);
        }
        rules_->check_key(name, keys_at + static_cast<std::uint64_t>(kb) * static_cast<std::uint64_t>(k), s, j, key);
        out.keys.push_back(key);
      }
      out.offsets.push_back(static_cast<std::int64_t>(out.keys.size()));
    }
  }

  void read_sample(Batch& out) {
    FileInput& in = *in_;
    const std::int64_t s = sample_in_file_++;
    if (!header_.checksum) {
      parse_sample(in, s, out);
      return;
    }
    const std::uint64_t length_at = in.offset();
    const auto length = in.read<std::int32_t>(sample_field(s, "length"));
    const std::uint64_t least = min_sample_bytes(header_) - 5;
    if (length < 0 || static_cast<std::uint64_t>(length) < least || static_cast<std::uint64_t>(length) >= in.left())
      throw_field_error(in.name(), length_at, sample_field(s, "length"),
                        "a byte count in [" + std::to_string(least) + ", " +
                            std::to_string(in.left() == 0 ? 0 : in.left() - 1) +
                            "] (its labels, dense and slots; the file's remaining bytes less the checkbits)",
                        std::to_string(length));
    const auto bytes = static_cast<std::size_t>(length);
    const std::uint64_t payload_at = in.offset();
    const std::byte* p = in.take(bytes + 1, sample_field(s, "bytes and checkbits"));
    const std::uint8_t sum = byte_sum(p, bytes);
    const auto stored = static_cast<std::uint8_t>(p[bytes]);
    if (stored != sum)
      throw_field_error(in.name(), payload_at + bytes, sample_field(s, "checkbits"),
                        std::to_string(sum) + " (the sum of bytes [" + std::to_string(payload_at) + ", " +
                            std::to_string(payload_at + bytes) + ") modulo 256)",
                        std::to_string(stored));
    ByteReader r({p, bytes}, in.name(), payload_at, "sample " + std::to_string(s) + "'s length");
    parse_sample(r, s, out);
    if (r.left() != 0)
      throw_field_error(in.name(), length_at, sample_field(s, "length"),
                        std::to_string(bytes - r.left()) + " (the bytes of its labels, dense and slots)",
                        std::to_string(length));
  }

  std::vector<std::filesystem::path> files_;
  std::vector<std::int64_t> records_;  // of each file, from its header
  TraceReadOptions options_;
  KeyWidth width_;
  std::vector<std::string> notes_;  // how the width was chosen, when it was detected
  std::string undetected_;          // appended to errors when neither width read the first samples
  bool hints_ = true;               // false in a probe
  TraceShape shape_;
  std::optional<detail::KeyRules> rules_;
  std::optional<FileInput> in_;
  NormHeader header_;
  std::size_t next_file_ = 0;
  std::int64_t left_in_file_ = 0;
  std::int64_t sample_in_file_ = 0;
  std::int64_t position_ = 0;
};

class NormWriter final : public TraceWriter {
 public:
  NormWriter(const std::filesystem::path& path, const TraceShape& shape, const TraceWriteOptions& options)
      : path_(path), shape_(shape), options_(options), rules_(shape.slot_sizes, 0, shape.num_slots), out_(path) {
    write_header(false);
  }

  void write(const Batch& b) override {
    detail::check_batch_for_writer(b, shape_, path_.string());
    const auto L = static_cast<std::size_t>(shape_.label_dim), D = static_cast<std::size_t>(shape_.dense_dim);
    for (std::int64_t i = 0; i < b.num_samples; ++i) {
      const std::int64_t s = written_ + i;
      sample_.clear();
      put_bytes(sample_, b.labels.data() + static_cast<std::size_t>(i) * L, 4 * L);
      put_bytes(sample_, b.dense.data() + static_cast<std::size_t>(i) * D, 4 * D);
      for (std::int32_t j = 0; j < shape_.num_slots; ++j) {
        const auto bag = b.bag(i * shape_.num_slots + j);
        if (bag.size() > 0x7FFFFFFF)
          throw InputError("cannot write " + path_.string() + ": sample " + std::to_string(s) + " slot " +
                           std::to_string(j) + " holds " + std::to_string(bag.size()) + " keys (nnz is an int)");
        put<std::int32_t>(sample_, static_cast<std::int32_t>(bag.size()));
        for (const Key k : bag) {
          rules_.check_key_to_write(path_.string(), s, j, k);
          if (options_.key_width == KeyWidth::kI64) {
            put<std::int64_t>(sample_, k);
          } else {
            if (k < 0 || k > 0xFFFFFFFFLL)
              throw InputError("cannot write " + path_.string() + ": sample " + std::to_string(s) + " slot " +
                               std::to_string(j) + " key " + std::to_string(k) +
                               " does not fit input_key_type I32 (unsigned int); write I64 keys");
            put<std::uint32_t>(sample_, static_cast<std::uint32_t>(k));
          }
        }
      }
      write_record(sample_);
    }
    written_ += b.num_samples;
  }

  void close() override {
    write_header(true);
    out_.commit();
  }
  std::int64_t samples_written() const override { return written_; }

 private:
  void write_record(const std::vector<std::byte>& bytes) {
    if (!options_.norm_checksum) {
      out_.write(bytes);
      return;
    }
    if (bytes.size() > 0x7FFFFFFF)
      throw InputError("cannot write " + path_.string() + ": a sample of " + std::to_string(bytes.size()) +
                       " bytes does not fit checksum mode's int length");
    const auto length = static_cast<std::int32_t>(bytes.size());
    const std::uint8_t sum = byte_sum(bytes.data(), bytes.size());
    out_.write(&length, 4);
    out_.write(bytes);
    out_.write(&sum, 1);
  }

  // The header goes first with number_of_records 0 and is rewritten at close with the count.
  void write_header(bool final) {
    std::vector<std::byte> h;
    put<std::int64_t>(h, options_.norm_checksum ? 1 : 0);
    put<std::int64_t>(h, written_);
    put<std::int64_t>(h, shape_.label_dim);
    put<std::int64_t>(h, shape_.dense_dim);
    put<std::int64_t>(h, shape_.num_slots);
    for (int i = 0; i < 3; ++i) put<std::int64_t>(h, 0);
    if (!final) {
      write_record(h);
      return;
    }
    if (options_.norm_checksum) {
      const std::uint8_t sum = byte_sum(h.data(), h.size());
      h.insert(h.begin(), 4, std::byte{0});
      std::memcpy(h.data(), &kNormChecksumLength, 4);
      h.push_back(static_cast<std::byte>(sum));
    }
    out_.patch(0, h);
  }

  std::filesystem::path path_;
  TraceShape shape_;
  TraceWriteOptions options_;
  detail::KeyRules rules_;
  AtomicFile out_;
  std::vector<std::byte> sample_;
  std::int64_t written_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> open_norm_reader(const std::vector<std::filesystem::path>& files,
                                              const TraceReadOptions& options) {
  auto reader = std::make_unique<NormReader>(files, options);
  reader->choose_key_width();
  return reader;
}

std::unique_ptr<TraceWriter> open_norm_writer(const std::filesystem::path& path, const TraceShape& shape,
                                              const TraceWriteOptions& options) {
  detail::check_shape_for_writer(shape, path.string());
  return std::make_unique<NormWriter>(path, shape, options);
}

bool looks_like_norm_data(std::span<const std::byte> head) {
  std::int64_t f[5];
  std::size_t base = 0;
  if (head.size() >= 4) {
    std::int32_t length;
    std::memcpy(&length, head.data(), 4);
    if (length == kNormChecksumLength) base = 4;
  }
  if (head.size() < base + sizeof f) return false;
  std::memcpy(f, head.data() + base, sizeof f);
  return f[0] == (base ? 1 : 0) && f[1] >= 0 && f[2] >= 0 && f[2] <= kTraceMaxDim && f[3] >= 0 &&
         f[3] <= kTraceMaxDim && f[4] >= 1 && f[4] <= kTraceMaxSlots;
}

}  // namespace embscale::trace
