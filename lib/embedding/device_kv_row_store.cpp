#include "embedding/device_kv_row_store.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

#include "core/error.hpp"
#include "embedding/device_step_family.hpp"
#include "embedding/kv_row_store.hpp"
#include "embedding/portable/optimizer_ref.hpp"
#include "kv/keyed_kv_table.hpp"
#include "kv/table_file.hpp"

namespace embscale::embedding {
namespace {

// The context, checked before the table takes memory on it.
ExecutionContext device_context(ExecutionContext context, const std::string& field) {
  if (context.on_host()) throw Error(field + ": the GPU's dynamic table needs a device context");
  return context;
}

}  // namespace

DeviceKvRowStore::DeviceKvRowStore(const kv::TableOptions& options, std::string field, ExecutionContext context,
                                   const device::DeviceLibrary& library)
    : field_(std::move(field)), dim_(static_cast<std::int32_t>(options.dim)),
      state_width_(options.training ? static_cast<std::int32_t>(options.optimizer_state_width) : 0),
      row_width_(static_cast<std::size_t>(dim_ + state_width_)), context_(device_context(context, field_)),
      library_(library), rows_family_(&embedding_rows_family(library)), table_(options, library, context_.stream),
      full_rows_(library), identity_(library), swept_keys_(library), swept_rows_(library), no_flags_(library) {}

std::span<const std::uint64_t> DeviceKvRowStore::stored(std::span<const Key> keys) noexcept {
  return kv::as_stored_keys(keys);
}

float* DeviceKvRowStore::full_rows(std::size_t keys) {
  const std::int64_t had = full_rows_.bytes();
  float* at = full_rows_.reserve_for<float>(keys * row_width_);
  if (full_rows_.bytes() != had)  // new memory: zeros, so an update never reads what no call wrote
    library_.check(library_.functions().memset_async(at, 0, full_rows_.bytes(), context_.stream), "clearing rows");
  return at;
}

const std::int64_t* DeviceKvRowStore::identity(std::size_t n) {
  if (n > identity_size_) {
    const std::size_t size = std::max(n, 2 * identity_size_);
    std::vector<std::int64_t> rows(size);
    std::iota(rows.begin(), rows.end(), std::int64_t{0});
    identity_.assign(std::span<const std::int64_t>(rows), context_.stream);
    // The host vector must outlive its copy.
    library_.check(library_.functions().stream_synchronize(context_.stream), "uploading row indices");
    identity_size_ = size;
  }
  return static_cast<const std::int64_t*>(identity_.data());
}

void DeviceKvRowStore::read(std::span<const Key> keys, std::span<float> rows) {
  const auto dim = static_cast<std::size_t>(dim_);
  EMBSCALE_EXPECTS(rows.size() == keys.size() * dim, "rows must hold keys.size() x dim values");
  // A row that is only its values is found straight into the caller's rows. A step without keys
  // calls the table too: the call advances a STEP table's clock, as on the host.
  const bool direct = row_width_ == dim;
  float* found = direct ? rows.data() : full_rows(keys.size());
  kv::CallStats stats;
  try {
    stats = table_.find_or_insert_resident(stored(keys), found);
  } catch (const kv::ReservedKeyError& e) {
    refuse_reserved(keys, e);
  } catch (const InputError&) {
    throw;
  } catch (const Error& e) {
    if (table_.options().safe_check != kv::SafeCheck::kError) throw;
    throw capacity_error(field_, keys.size(), table_.capacity(), e);
  }
  count_call(counters_, stats, keys.size());
  if (!direct && !keys.empty())
    library_.check(rows_family_->embedding_rows_gather(found, row_width_, dim, identity(keys.size()), keys.size(),
                                                       rows.data(), context_.stream),
                   "embedding_rows gather");
}

void DeviceKvRowStore::apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
                             std::int64_t step) {
  const auto dim = static_cast<std::size_t>(dim_);
  EMBSCALE_EXPECTS(grads.size() == keys.size() * dim, "grads must hold keys.size() x dim values");
  EMBSCALE_EXPECTS(optimizer.state_width() == state_width_, "the store was made for this optimizer's state width");
  const portable::OptimizerRef ref = optimizer.portable_ref(step);
  const bool sweep = optimizer.update_type() == UpdateType::kGlobal && optimizer.changes_untouched_rows();
  // A key not found (evicted since its read) has no row in the scratch: the update runs on what
  // the scratch held there, and assign, which writes present keys only, drops it. Nothing changes
  // the table between the find and the assigns, so the keys found are the keys assigned.
  float* full = keys.empty() ? nullptr : full_rows(keys.size());
  try {
    if (!keys.empty()) {
      table_.find_resident(stored(keys), full);
      library_.check(rows_family_->embedding_rows_apply(&ref, full, row_width_, dim, identity(keys.size()),
                                                        grads.data(), keys.size(), nullptr, context_.stream),
                     "embedding_rows apply");
    }
    if (sweep) sweep_untouched(ref);  // the step's keys too, until their own rows go back next
    if (!keys.empty()) table_.assign_resident(stored(keys), full);
  } catch (const kv::ReservedKeyError& e) {
    refuse_reserved(keys, e);
  }
}

void DeviceKvRowStore::refuse_reserved(std::span<const Key> keys, const kv::ReservedKeyError& e) const {
  Key key = 0;
  if (e.position() < keys.size()) {
    library_.check(library_.functions().copy_async(&key, keys.data() + e.position(), sizeof key, context_.stream),
                   "reading the reserved key");
    library_.check(library_.functions().stream_synchronize(context_.stream), "reading the reserved key");
  }
  throw InputError(field_ + ": key " + std::to_string(key) + " (position " + std::to_string(e.position()) +
                   " of a batch on the GPU): the keys -3 .. -1 are reserved by the dynamic table");
}

void DeviceKvRowStore::sweep_untouched(const portable::OptimizerRef& optimizer) {
  constexpr std::int64_t kBlock = 1 << 16;  // slots exported at a time: bounded scratch at any capacity
  const std::int64_t block = std::min(kBlock, table_.capacity());
  auto* keys = swept_keys_.reserve_for<std::uint64_t>(static_cast<std::size_t>(block));
  auto* rows = swept_rows_.reserve_for<float>(static_cast<std::size_t>(block) * row_width_);
  auto* flags = no_flags_.reserve_for<std::uint8_t>(static_cast<std::size_t>(block));
  if (block > no_flags_size_) {  // new flags: zeroed once, the sweep leaves them zero
    library_.check(library_.functions().memset_async(flags, 0, block, context_.stream), "clearing flags");
    no_flags_size_ = block;
  }
  for (std::int64_t offset = 0; offset < table_.capacity(); offset += block) {
    const std::int64_t n = table_.export_resident(offset, block, keys, rows);
    if (n == 0) continue;
    library_.check(rows_family_->embedding_rows_sweep(&optimizer, rows, row_width_, static_cast<std::uint64_t>(dim_),
                                                      static_cast<std::uint64_t>(n), flags, context_.stream),
                   "embedding_rows sweep");
    table_.assign_resident(std::span<const std::uint64_t>(keys, static_cast<std::size_t>(n)), rows);
  }
}

bool DeviceKvRowStore::row(Key key, std::span<float> out) const {
  EMBSCALE_EXPECTS(out.size() == static_cast<std::size_t>(dim_), "out must hold dim values");
  std::vector<float> full(row_width_);
  std::uint8_t found = 0;
  const auto stored_key = static_cast<std::uint64_t>(key);
  table_.find(std::span<const std::uint64_t>(&stored_key, 1), full, std::span<std::uint8_t>(&found, 1));
  if (found) std::copy_n(full.begin(), out.size(), out.begin());
  return found != 0;
}

void DeviceKvRowStore::for_each_entry(
    const std::function<void(const std::vector<std::uint64_t>& keys, const std::vector<float>& rows)>& visit) const {
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> rows;
  const std::int64_t chunk = 1 << 16;
  for (std::int64_t offset = 0; offset < table_.capacity(); offset += chunk) {
    table_.export_batch(offset, chunk, keys, rows, scores);
    visit(keys, rows);
  }
}

void DeviceKvRowStore::for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const {
  for_each_entry([&](const std::vector<std::uint64_t>& keys, const std::vector<float>& rows) {
    for (std::size_t i = 0; i < keys.size(); ++i)
      visit(static_cast<Key>(keys[i]),
            std::span<const float>(rows).subspan(i * row_width_, static_cast<std::size_t>(dim_)));
  });
}

void DeviceKvRowStore::for_each_evicting_key(const std::function<void(Key)>& visit) const {
  for_each_entry([&](const std::vector<std::uint64_t>& keys, const std::vector<float>&) {
    for (const std::uint64_t key : keys) visit(static_cast<Key>(key));
  });
}

void DeviceKvRowStore::set_access_observer(kv::AccessObserver* observer) {
  if (observer) throw Error(field_ + ": the eviction study watches host tables; this layer's table is on a GPU");
}

void DeviceKvRowStore::dump_table(const std::filesystem::path& path) const {
  kv::dump(table_, kv::KeyType::kInt64, path);
}

kv::DumpImage DeviceKvRowStore::dump_incremental_image(std::uint64_t threshold) const {
  return kv::dump_incremental_image(table_, kv::KeyType::kInt64, threshold);
}

kv::CallStats DeviceKvRowStore::restore_entries(std::span<const Key> keys, std::span<const float> rows,
                                                std::span<const std::uint64_t> scores) {
  return table_.restore(stored(keys), rows, scores);
}

StoreCounters DeviceKvRowStore::take_counters() { return std::exchange(counters_, {}); }

}  // namespace embscale::embedding
