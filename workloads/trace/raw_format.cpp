#include "workloads/trace/raw_format.hpp"

#include <cmath>
#include <cstring>
#include <limits>
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

// Records read per take(): bounded buffer whatever max_samples is.
constexpr std::int64_t kRecordsPerTake = 4096;

class RawReader final : public TraceReader {
 public:
  RawReader(const std::filesystem::path& path, const TraceReadOptions& options)
      : in_(path, "Raw data file"), float_label_dense_(options.raw_float_label_dense) {
    const std::string& name = in_.name();
    if (!options.label_dim || !options.dense_dim || options.slot_sizes.empty())
      throw InputError("cannot read Raw file " + name +
                       ": the Raw format has no header; label_dim, dense_dim and slot_size_array must be given");
    shape_.label_dim = *options.label_dim;
    shape_.dense_dim = *options.dense_dim;
    shape_.num_slots = static_cast<std::int32_t>(options.slot_sizes.size());
    shape_.slot_sizes = options.slot_sizes;
    if (shape_.label_dim < 0 || shape_.label_dim > kTraceMaxDim || shape_.dense_dim < 0 ||
        shape_.dense_dim > kTraceMaxDim || shape_.num_slots > kTraceMaxSlots)
      throw InputError("cannot read Raw file " + name + ": label_dim " + std::to_string(shape_.label_dim) +
                       ", dense_dim " + std::to_string(shape_.dense_dim) + " or slot count " +
                       std::to_string(shape_.num_slots) + " outside [0, 2^20]");
    if (options.num_slots && *options.num_slots != shape_.num_slots)
      throw InputError("cannot read Raw file " + name + ": slot_num " + std::to_string(*options.num_slots) +
                       " disagrees with slot_size_array's " + std::to_string(shape_.num_slots) + " entries");
    rules_.emplace(options.slot_sizes, 0, shape_.num_slots);
    record_bytes_ = 4 * static_cast<std::uint64_t>(shape_.label_dim + shape_.dense_dim + shape_.num_slots);
    shape_.num_samples = static_cast<std::int64_t>(in_.size() / record_bytes_);
    if (const std::uint64_t over = in_.size() % record_bytes_; over != 0) {
      // Either the file was cut, or it was written with other dims: say both.
      const auto at = static_cast<std::uint64_t>(shape_.num_samples) * record_bytes_;
      throw InputError(
          name + ": truncated: " + sample_field(shape_.num_samples, "record") + " (" + std::to_string(record_bytes_) +
          " bytes: label_dim " + std::to_string(shape_.label_dim) + ", dense_dim " + std::to_string(shape_.dense_dim) +
          ", " + std::to_string(shape_.num_slots) + " slots, 4 bytes each) needs bytes [" + std::to_string(at) + ", " +
          std::to_string(at + record_bytes_) + ") but the file ends at byte " + std::to_string(in_.size()) +
          "; if the file is whole, it was written with another label_dim, dense_dim or slot count "
          "(slot_size_array)");
    }
  }

  const TraceShape& shape() const override { return shape_; }
  std::int64_t position() const override { return position_; }
  void seek(std::int64_t sample) override {
    if (sample < 0 || sample > shape_.num_samples)
      throw InputError("cannot seek to sample " + std::to_string(sample) + " of Raw file " + in_.name() +
                       ": it holds " + std::to_string(shape_.num_samples) + " samples");
    in_.seek(static_cast<std::uint64_t>(sample) * record_bytes_);
    position_ = sample;
  }

  std::int64_t read(std::int64_t max_samples, Batch& out) override {
    EMBSCALE_EXPECTS(max_samples >= 0, "read a nonnegative number of samples");
    const std::int64_t n = std::min(max_samples, shape_.num_samples - position_);
    detail::begin_batch(out, shape_, position_, n);
    out.keys.reserve(static_cast<std::size_t>(n * shape_.num_slots));
    for (std::int64_t done = 0; done < n;) {
      const std::int64_t k = std::min(kRecordsPerTake, n - done);
      const std::uint64_t at = in_.offset();
      const std::byte* p = in_.take(static_cast<std::size_t>(k) * record_bytes_, sample_field(position_, "records"));
      for (std::int64_t i = 0; i < k; ++i)
        parse(p + static_cast<std::size_t>(i) * record_bytes_, at + i * record_bytes_, out);
      done += k;
    }
    return n;
  }

 private:
  void parse(const std::byte* p, std::uint64_t at, Batch& out) {
    const std::int64_t s = position_++;
    const auto field = [&](std::int64_t i) {
      std::int32_t v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    };
    const auto as_float = [&](std::int64_t i) {
      float v;
      std::memcpy(&v, p + 4 * i, 4);
      return v;
    };
    for (std::int64_t i = 0; i < shape_.label_dim; ++i)
      out.labels.push_back(float_label_dense_ ? as_float(i) : static_cast<float>(field(i)));
    for (std::int64_t i = shape_.label_dim; i < shape_.label_dim + shape_.dense_dim; ++i) {
      if (float_label_dense_) {
        out.dense.push_back(as_float(i));
        continue;
      }
      const std::int32_t v = field(i);
      if (v < 0)
        throw_field_error(in_.name(), at + 4 * i, sample_field(s, "dense " + std::to_string(i - shape_.label_dim)),
                          "an integer >= 0 (int mode reads log(dense + 1), as HugeCTR: -inf or NaN below 0)",
                          std::to_string(v) +
                              "; if the file stores float labels and dense features, read it with "
                              "float_label_dense (--float-label-dense)");
      out.dense.push_back(std::log(static_cast<float>(v) + 1.f));
    }
    const std::int64_t first_key = shape_.label_dim + shape_.dense_dim;
    for (std::int32_t j = 0; j < shape_.num_slots; ++j) {
      const std::int32_t local = field(first_key + j);
      if (local < 0 || local >= rules_->size(j))
        throw_field_error(in_.name(), at + 4 * (first_key + j), slot_field(s, j, "key"),
                          "a per-slot key in [0, " + std::to_string(rules_->size(j)) + ") (slot_size_array[" +
                              std::to_string(j) + "])",
                          std::to_string(local) +
                              "; if the file is sound, slot_size_array (or label_dim, dense_dim, "
                              "which place the keys in a record) differ from the file's");
      out.keys.push_back(rules_->offset(j) + local);
      out.offsets.push_back(static_cast<std::int64_t>(out.keys.size()));
    }
    ++out.num_samples;
  }

  FileInput in_;
  bool float_label_dense_;
  TraceShape shape_;
  std::optional<detail::KeyRules> rules_;
  std::uint64_t record_bytes_ = 0;
  std::int64_t position_ = 0;
};

class RawWriter final : public TraceWriter {
 public:
  RawWriter(const std::filesystem::path& path, const TraceShape& shape, const TraceWriteOptions& options)
      : path_(path), shape_(shape), float_label_dense_(options.raw_float_label_dense),
        rules_(shape.slot_sizes, 0, shape.num_slots), out_(path) {}

  void write(const Batch& b) override {
    detail::check_batch_for_writer(b, shape_, path_.string());
    const std::string name = path_.string();
    const auto L = static_cast<std::size_t>(shape_.label_dim), D = static_cast<std::size_t>(shape_.dense_dim);
    for (std::int64_t i = 0; i < b.num_samples; ++i) {
      const std::int64_t s = written_ + i;
      record_.clear();
      for (std::size_t l = 0; l < L; ++l) put_value(b.labels[static_cast<std::size_t>(i) * L + l], false, s, "label");
      for (std::size_t d = 0; d < D; ++d) put_value(b.dense[static_cast<std::size_t>(i) * D + d], true, s, "dense");
      for (std::int32_t j = 0; j < shape_.num_slots; ++j) {
        const auto bag = b.bag(i * shape_.num_slots + j);
        if (bag.size() != 1)
          throw InputError("cannot write " + name + ": " + slot_field(s, j, "") + "holds " +
                           std::to_string(bag.size()) + " keys; the Raw format is one-hot (exactly one key per slot)");
        rules_.check_key_to_write(name, s, j, bag[0]);
        const std::int64_t local = bag[0] - rules_.offset(j);
        if (local > std::numeric_limits<std::int32_t>::max())
          throw InputError("cannot write " + name + ": " + slot_field(s, j, "key") + " " + std::to_string(local) +
                           " (per slot) does not fit the Raw format's int32");
        put<std::int32_t>(record_, static_cast<std::int32_t>(local));
      }
      out_.write(record_);
    }
    written_ += b.num_samples;
  }

  void close() override { out_.commit(); }
  std::int64_t samples_written() const override { return written_; }

 private:
  // Float bits in float mode; an int in int mode: the label itself (it must be an integer), the
  // dense value as round(e^d - 1), the int whose log(int + 1) the reader gives back.
  void put_value(float v, bool dense, std::int64_t s, const char* what) {
    if (float_label_dense_) {
      put<float>(record_, v);
      return;
    }
    const double x = dense ? std::round(std::expm1(static_cast<double>(v))) : static_cast<double>(v);
    if (!(x >= (dense ? 0.0 : -2147483648.0) && x <= 2147483647.0) || (!dense && x != std::floor(x)))
      throw InputError("cannot write " + path_.string() + ": " + sample_field(s, what) + " " + std::to_string(v) +
                       (dense ? " gives no int >= 0 as round(e^d - 1)" : " is not an int32") +
                       " (int mode; write with float_label_dense)");
    put<std::int32_t>(record_, static_cast<std::int32_t>(x));
  }

  std::filesystem::path path_;
  TraceShape shape_;
  bool float_label_dense_;
  detail::KeyRules rules_;
  AtomicFile out_;
  std::vector<std::byte> record_;
  std::int64_t written_ = 0;
};

}  // namespace

std::unique_ptr<TraceReader> open_raw_reader(const std::filesystem::path& path, const TraceReadOptions& options) {
  return std::make_unique<RawReader>(path, options);
}

std::unique_ptr<TraceWriter> open_raw_writer(const std::filesystem::path& path, const TraceShape& shape,
                                             const TraceWriteOptions& options) {
  detail::check_shape_for_writer(shape, path.string());
  if (shape.slot_sizes.empty())
    throw InputError("cannot write Raw file " + path.string() +
                     ": the Raw format needs slot_size_array (its keys are "
                     "per slot)");
  return std::make_unique<RawWriter>(path, shape, options);
}

}  // namespace embscale::trace
