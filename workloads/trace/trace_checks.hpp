// Checks that every trace reader and writer shares (internal to workloads/trace).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/batch.hpp"
#include "workloads/trace/trace.hpp"

namespace embscale::trace::detail {

// "sample 12" / "sample 12 slot 3": the record a field belongs to, for messages.
std::string sample_field(std::int64_t sample, const std::string& field);
std::string slot_field(std::int64_t sample, std::int64_t slot, const std::string& field);

// A header dimension in [lo, hi] that, when one is expected, equals it (`configured_by` says why:
// "as configured", "as in the list's first file").
void check_dim(const std::string& file, std::uint64_t offset, const std::string& field, std::int64_t got,
               std::int64_t lo, std::int64_t hi, const std::optional<std::int32_t>& configured,
               const std::string& configured_by = "as configured");

// Keys against slot key spaces and bags against max_nnz.
class KeyRules {
 public:
  KeyRules(const std::vector<std::int64_t>& slot_sizes, std::int64_t max_nnz, std::int32_t num_slots);
  bool has_key_spaces() const noexcept { return !offsets_.empty(); }
  std::int64_t offset(std::int32_t slot) const noexcept { return offsets_[static_cast<std::size_t>(slot)]; }
  std::int64_t size(std::int32_t slot) const noexcept { return sizes_[static_cast<std::size_t>(slot)]; }
  // nnz in [0, max_nnz] (or any nonnegative count when max_nnz is 0).
  void check_nnz(const std::string& file, std::uint64_t offset, std::int64_t sample, std::int32_t slot,
                 std::int64_t nnz) const;
  // A unified key inside slot's space [offset_j, offset_j + size_j) (no check without key spaces).
  void check_key(const std::string& file, std::uint64_t offset, std::int64_t sample, std::int32_t slot, Key key) const;
  // The same for a key handed to a writer: InputError "cannot write <file>: sample .. slot .. key ..".
  void check_key_to_write(const std::string& file, std::int64_t sample, std::int32_t slot, Key key) const;

 private:
  bool contains(std::int32_t slot, Key key) const noexcept;
  std::string space(std::int32_t slot) const;

  std::vector<std::int64_t> sizes_;
  std::vector<std::int64_t> offsets_;
  std::int64_t max_nnz_;
};

// Starts `out` as an empty batch of the shape with room for n samples (keys grow as they come).
void begin_batch(Batch& out, const TraceShape& shape, std::int64_t first_sample, std::int64_t n);
// A batch handed to a writer has the writer's dims and slots and sound CSR offsets (validate_batch).
void check_batch_for_writer(const Batch& batch, const TraceShape& shape, const std::string& file);
// Writers: the shape's dims are in range and its slot_sizes, when given, fit num_slots.
void check_shape_for_writer(const TraceShape& shape, const std::string& file);

}  // namespace embscale::trace::detail
