#include "embedding/device_static_row_store.hpp"

#include <algorithm>
#include <limits>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "embedding/device_step_family.hpp"
#include "embedding/portable/optimizer_ref.hpp"
#include "embedding/static_row_store.hpp"
#include "kv/row_codec.hpp"

namespace embscale::embedding {
namespace {

constexpr std::uint64_t kNoBadKey = std::numeric_limits<std::uint64_t>::max();

}  // namespace

DeviceStaticRowStore::DeviceStaticRowStore(OwnedKeys owned, const kv::TableOptions& options, std::int32_t column_first,
                                           std::int32_t full_dim, ExecutionContext context,
                                           const device::DeviceLibrary& library)
    : owned_(std::move(owned)), dim_(static_cast<std::int32_t>(options.dim)), type_(options.value_type),
      value_bytes_(kv::value_bytes(options.value_type)),
      state_width_(options.training ? static_cast<std::int32_t>(options.optimizer_state_width) : 0),
      row_width_(static_cast<std::size_t>(dim_ + state_width_)), context_(context), library_(library),
      rows_family_(&embedding_rows_family(library)),
      table_(library, checked_table_bytes(owned_, options, context, library)),
      ranges_(library, static_cast<std::int64_t>(owned_.portable_ranges().size() * sizeof(portable::OwnedRange))),
      first_bad_(library, sizeof(std::uint64_t)), rows_(library), touched_(library), scratch_(library) {
  // The initial rows, made on the host as StaticRowStore makes them (and encoded as it stores
  // them), uploaded in blocks.
  const StaticInitialRows initial(owned_, options, column_first, full_dim);
  std::vector<float> block;
  std::vector<std::byte> stored;
  for (std::int64_t first = 0; first < owned_.rows(); first += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, owned_.rows() - first);
    const std::size_t values = static_cast<std::size_t>(rows) * row_width_;
    block.resize(values);
    for (std::int64_t r = 0; r < rows; ++r)
      initial.row(first + r, std::span<float>(block.data() + static_cast<std::size_t>(r) * row_width_, row_width_));
    stored.resize(values * value_bytes_);
    kv::encode_values(type_, block.data(), stored.data(), values);
    library_.check(library_.functions().copy_async(stored_row(first), stored.data(),
                                                   static_cast<std::int64_t>(stored.size()), context_.stream),
                   "uploading the initial rows");
    library_.check(library_.functions().stream_synchronize(context_.stream), "uploading the initial rows");
  }
  const auto ranges = owned_.portable_ranges();
  range_count_ = ranges.size();
  ranges_.copy_from_host(ranges.data(), static_cast<std::int64_t>(ranges.size() * sizeof(portable::OwnedRange)),
                         context_.stream);
  library_.check(library_.functions().stream_synchronize(context_.stream), "uploading the owned ranges");
}

std::int64_t DeviceStaticRowStore::checked_table_bytes(const OwnedKeys& owned, const kv::TableOptions& options,
                                                       const ExecutionContext& context, const device::DeviceLibrary&) {
  EMBSCALE_EXPECTS(options.dim >= 1, "a table needs dim >= 1");
  if (context.on_host()) throw Error("the device static row store needs a device context");
  const auto state = options.training ? options.optimizer_state_width : 0;
  return owned.rows() * static_cast<std::int64_t>(options.dim + state) *
         static_cast<std::int64_t>(kv::value_bytes(options.value_type));
}

const std::int64_t* DeviceStaticRowStore::index(std::span<const Key> keys) {
  const auto& f = *rows_family_;
  auto* rows = rows_.reserve_for<std::int64_t>(keys.size());
  std::uint64_t first_bad = kNoBadKey;
  first_bad_.copy_from_host(&first_bad, sizeof first_bad, context_.stream);
  library_.check(f.embedding_rows_index(ranges_.data(), range_count_, keys.data(), keys.size(), rows,
                                        static_cast<std::uint64_t*>(first_bad_.data()), context_.stream),
                 "embedding_rows index");
  first_bad_.copy_to_host(&first_bad, sizeof first_bad, context_.stream);
  library_.check(library_.functions().stream_synchronize(context_.stream), "embedding_rows index");
  if (first_bad != kNoBadKey) {
    Key key = 0;
    library_.check(library_.functions().copy_async(&key, keys.data() + first_bad, sizeof key, context_.stream),
                   "reading the key not owned");
    library_.check(library_.functions().stream_synchronize(context_.stream), "reading the key not owned");
    throw Error("static table: received key " + std::to_string(key) + ", which this rank does not own");
  }
  return rows;
}

void DeviceStaticRowStore::read(std::span<const Key> keys, std::span<float> rows) {
  EMBSCALE_EXPECTS(rows.size() == keys.size() * static_cast<std::size_t>(dim_),
                   "rows must hold keys.size() x dim values");
  if (keys.empty()) return;
  const std::int64_t* at = index(keys);
  const auto dim = static_cast<std::uint64_t>(dim_);
  if (sixteen_bits())
    library_.check(
        rows_family_->embedding_rows_gather16(static_cast<const std::uint16_t*>(table_.data()), bfloat(), row_width_,
                                              dim, at, keys.size(), rows.data(), context_.stream),
        "embedding_rows gather16");
  else
    library_.check(rows_family_->embedding_rows_gather(static_cast<const float*>(table_.data()), row_width_, dim, at,
                                                       keys.size(), rows.data(), context_.stream),
                   "embedding_rows gather");
  reads_ += static_cast<std::int64_t>(keys.size());
}

void DeviceStaticRowStore::apply(std::span<const Key> keys, std::span<const float> grads,
                                 const SparseOptimizer& optimizer, std::int64_t step) {
  EMBSCALE_EXPECTS(grads.size() == keys.size() * static_cast<std::size_t>(dim_),
                   "grads must hold keys.size() x dim values");
  EMBSCALE_EXPECTS(optimizer.state_width() == state_width_, "the store was made for this optimizer's state width");
  const auto& f = *rows_family_;
  const portable::OptimizerRef ref = optimizer.portable_ref(step);
  const bool sweep = optimizer.update_type() == UpdateType::kGlobal && optimizer.changes_untouched_rows();
  std::uint8_t* touched = nullptr;
  if (sweep) {
    touched = touched_.reserve_for<std::uint8_t>(static_cast<std::size_t>(owned_.rows()));
    // A completed sweep leaves the flags zero; a new buffer, or a call that failed between the apply
    // and the sweep, does not: those are cleared first.
    if (!touched_clean_)
      library_.check(library_.functions().memset_async(touched, 0, owned_.rows(), context_.stream), "clearing flags");
    touched_clean_ = false;
  }
  const auto dim = static_cast<std::uint64_t>(dim_);
  auto* table16 = static_cast<std::uint16_t*>(table_.data());
  if (!keys.empty()) {
    const std::int64_t* at = index(keys);
    if (sixteen_bits())
      library_.check(
          f.embedding_rows_apply16(&ref, table16, bfloat(), row_width_, dim, at, grads.data(), keys.size(), touched,
                                   scratch_.reserve_for<float>(keys.size() * row_width_), context_.stream),
          "embedding_rows apply16");
    else
      library_.check(f.embedding_rows_apply(&ref, static_cast<float*>(table_.data()), row_width_, dim, at, grads.data(),
                                            keys.size(), touched, context_.stream),
                     "embedding_rows apply");
  }
  if (sweep) {
    const auto rows = static_cast<std::uint64_t>(owned_.rows());
    if (sixteen_bits()) {  // in blocks of rows: a decoded copy of a block, not of the table
      for (std::uint64_t first = 0; first < rows; first += kBlockRows) {
        const std::uint64_t count = std::min<std::uint64_t>(kBlockRows, rows - first);
        library_.check(f.embedding_rows_sweep16(&ref, table16, bfloat(), row_width_, dim, first, count, touched,
                                                scratch_.reserve_for<float>(count * row_width_), context_.stream),
                       "embedding_rows sweep16");
      }
    } else {
      library_.check(f.embedding_rows_sweep(&ref, static_cast<float*>(table_.data()), row_width_, dim, rows, touched,
                                            context_.stream),
                     "embedding_rows sweep");
    }
    touched_clean_ = true;
  }
}

bool DeviceStaticRowStore::row(Key key, std::span<float> out) const {
  const std::int64_t r = owned_.row_of(key);
  if (r < 0) return false;
  EMBSCALE_EXPECTS(out.size() == static_cast<std::size_t>(dim_), "out must hold dim values");
  std::vector<std::byte> stored(out.size() * value_bytes_);
  library_.check(library_.functions().copy_async(stored.data(), stored_row(r), static_cast<std::int64_t>(stored.size()),
                                                 context_.stream),
                 "reading a row");
  library_.check(library_.functions().stream_synchronize(context_.stream), "reading a row");
  kv::decode_values(type_, stored.data(), out.data(), out.size());
  return true;
}

void DeviceStaticRowStore::for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const {
  // In blocks of rows: host memory of a block, not of the table.
  std::vector<float> block;
  std::vector<std::byte> stored;
  for (std::int64_t first = 0; first < owned_.rows(); first += kBlockRows) {
    const std::int64_t rows = std::min(kBlockRows, owned_.rows() - first);
    const std::size_t values = static_cast<std::size_t>(rows) * row_width_;
    stored.resize(values * value_bytes_);
    library_.check(library_.functions().copy_async(stored.data(), stored_row(first),
                                                   static_cast<std::int64_t>(stored.size()), context_.stream),
                   "reading the table");
    library_.check(library_.functions().stream_synchronize(context_.stream), "reading the table");
    block.resize(values);
    kv::decode_values(type_, stored.data(), block.data(), values);
    for (std::int64_t r = 0; r < rows; ++r)
      visit(owned_.key_of(first + r), std::span<const float>(block.data() + static_cast<std::size_t>(r) * row_width_,
                                                             static_cast<std::size_t>(dim_)));
  }
}

StoreCounters DeviceStaticRowStore::take_counters() {
  StoreCounters c;
  c.hits = std::exchange(reads_, 0);  // every owned key is held
  return c;
}

}  // namespace embscale::embedding
