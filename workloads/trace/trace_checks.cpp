#include "workloads/trace/trace_checks.hpp"

#include <limits>

#include "core/byte_io.hpp"
#include "core/error.hpp"

namespace embscale::trace {

std::vector<std::int64_t> slot_offsets(const std::vector<std::int64_t>& slot_sizes) {
  std::vector<std::int64_t> offsets(slot_sizes.size());
  std::int64_t total = 0;
  for (std::size_t j = 0; j < slot_sizes.size(); ++j) {
    if (slot_sizes[j] <= 0)
      throw InputError("slot_size_array[" + std::to_string(j) + "]: expected a key space size >= 1, got " +
                       std::to_string(slot_sizes[j]));
    if (slot_sizes[j] > std::numeric_limits<std::int64_t>::max() - total)
      throw InputError("slot_size_array: the key spaces add up past 2^63 - 1 at slot " + std::to_string(j));
    offsets[j] = total;
    total += slot_sizes[j];
  }
  return offsets;
}

namespace detail {

std::string sample_field(std::int64_t sample, const std::string& field) {
  return "sample " + std::to_string(sample) + " " + field;
}
std::string slot_field(std::int64_t sample, std::int64_t slot, const std::string& field) {
  return "sample " + std::to_string(sample) + " slot " + std::to_string(slot) + " " + field;
}

void check_dim(const std::string& file, std::uint64_t offset, const std::string& field, std::int64_t got,
               std::int64_t lo, std::int64_t hi, const std::optional<std::int32_t>& configured,
               const std::string& configured_by) {
  if (got < lo || got > hi)
    throw_field_error(file, offset, field, "an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]",
                      std::to_string(got));
  if (configured && got != *configured)
    throw_field_error(file, offset, field, std::to_string(*configured) + " (" + configured_by + ")",
                      std::to_string(got));
}

KeyRules::KeyRules(const std::vector<std::int64_t>& slot_sizes, std::int64_t max_nnz, std::int32_t num_slots)
    : sizes_(slot_sizes), offsets_(slot_offsets(slot_sizes)), max_nnz_(max_nnz) {
  if (!slot_sizes.empty() && static_cast<std::int64_t>(slot_sizes.size()) != num_slots)
    throw InputError("slot_size_array has " + std::to_string(slot_sizes.size()) + " entries, expected one per slot (" +
                     std::to_string(num_slots) + ")");
  if (max_nnz < 0) throw InputError("max_nnz: expected >= 0 (0: no limit), got " + std::to_string(max_nnz));
}

void KeyRules::check_nnz(const std::string& file, std::uint64_t offset, std::int64_t sample, std::int32_t slot,
                         std::int64_t nnz) const {
  if (nnz < 0) throw_field_error(file, offset, slot_field(sample, slot, "nnz"), "a count >= 0", std::to_string(nnz));
  if (max_nnz_ > 0 && nnz > max_nnz_)
    throw_field_error(file, offset, slot_field(sample, slot, "nnz"),
                      "at most max_nnz = " + std::to_string(max_nnz_) + " keys", std::to_string(nnz));
}

bool KeyRules::contains(std::int32_t slot, Key key) const noexcept {
  // key - offset cannot overflow for key >= offset; a key below it fails the first test.
  return offsets_.empty() || (key >= offset(slot) && key - offset(slot) < size(slot));
}

std::string KeyRules::space(std::int32_t slot) const {
  return "slot " + std::to_string(slot) + "'s key space [" + std::to_string(offset(slot)) + ", " +
         std::to_string(offset(slot) + size(slot)) + ") (slot_size_array)";
}

void KeyRules::check_key(const std::string& file, std::uint64_t offset, std::int64_t sample, std::int32_t slot,
                         Key key) const {
  if (!contains(slot, key))
    throw_field_error(file, offset, slot_field(sample, slot, "key"), "a key of " + space(slot), std::to_string(key));
}

void KeyRules::check_key_to_write(const std::string& file, std::int64_t sample, std::int32_t slot, Key key) const {
  if (!contains(slot, key))
    throw InputError("cannot write " + file + ": " + slot_field(sample, slot, "key") + " " + std::to_string(key) +
                     " lies outside " + space(slot));
}

void begin_batch(Batch& out, const TraceShape& shape, std::int64_t first_sample, std::int64_t n) {
  out.first_sample = first_sample;
  out.num_samples = 0;
  out.num_slots = shape.num_slots;
  out.label_dim = shape.label_dim;
  out.dense_dim = shape.dense_dim;
  out.offsets.assign(1, 0);
  out.offsets.reserve(static_cast<std::size_t>(n * shape.num_slots + 1));
  out.keys.clear();
  out.labels.clear();
  out.labels.reserve(static_cast<std::size_t>(n * shape.label_dim));
  out.dense.clear();
  out.dense.reserve(static_cast<std::size_t>(n * shape.dense_dim));
}

void check_shape_for_writer(const TraceShape& shape, const std::string& file) {
  const auto refuse = [&](const std::string& what) { throw InputError("cannot write trace " + file + ": " + what); };
  if (shape.label_dim < 0 || shape.label_dim > kTraceMaxDim)
    refuse("label_dim " + std::to_string(shape.label_dim) + " outside [0, 2^20]");
  if (shape.dense_dim < 0 || shape.dense_dim > kTraceMaxDim)
    refuse("dense_dim " + std::to_string(shape.dense_dim) + " outside [0, 2^20]");
  if (shape.num_slots < 1 || shape.num_slots > kTraceMaxSlots)
    refuse("num_slots " + std::to_string(shape.num_slots) + " outside [1, 2^20]");
  if (!shape.slot_sizes.empty() && static_cast<std::int64_t>(shape.slot_sizes.size()) != shape.num_slots)
    refuse("slot_size_array has " + std::to_string(shape.slot_sizes.size()) + " entries for " +
           std::to_string(shape.num_slots) + " slots");
  (void)slot_offsets(shape.slot_sizes);
}

void check_batch_for_writer(const Batch& b, const TraceShape& shape, const std::string& file) {
  if (b.num_slots != shape.num_slots || b.label_dim != shape.label_dim || b.dense_dim != shape.dense_dim)
    throw Error("cannot write a batch to trace " + file + ": the batch has " + std::to_string(b.num_slots) +
                " slots, label_dim " + std::to_string(b.label_dim) + ", dense_dim " + std::to_string(b.dense_dim) +
                "; the trace " + std::to_string(shape.num_slots) + ", " + std::to_string(shape.label_dim) + ", " +
                std::to_string(shape.dense_dim));
  validate_batch(b);
}

}  // namespace detail
}  // namespace embscale::trace
