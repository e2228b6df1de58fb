#include "embedding/static_row_store.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>

#include "core/atomic_file.hpp"
#include "core/error.hpp"
#include "core/temp_files.hpp"
#include "kv/initializer.hpp"
#include "kv/row_codec.hpp"
#include "kv/table_file.hpp"
#include "kv/table_file_format.hpp"

namespace embscale::embedding {

StaticRowStore::StaticRowStore(OwnedKeys owned, const kv::TableOptions& options, std::int32_t column_first,
                               std::int32_t full_dim, ExecutionContext context, const RowMemory& memory)
    : threads_(std::max(context.threads, 1)), owned_(std::move(owned)), dim_(static_cast<std::int32_t>(options.dim)),
      state_width_(options.training ? static_cast<std::int32_t>(options.optimizer_state_width) : 0),
      row_width_(static_cast<std::size_t>(dim_ + state_width_)), type_(options.value_type),
      words_per_row_((row_width_ * kv::value_bytes(options.value_type) + sizeof(float) - 1) / sizeof(float)) {
  EMBSCALE_EXPECTS(dim_ >= 1, "a table needs dim >= 1");
  require_host_context(context, "the static row store");
  const std::size_t words = static_cast<std::size_t>(owned_.rows()) * words_per_row_;
  if (memory) {
    rows_ = memory(words);
    EMBSCALE_EXPECTS(rows_.size() == words, "a row memory of the words asked for");
  } else {
    storage_.resize(words);
    rows_ = storage_;
  }
  scratch_.resize(row_width_);
  const StaticInitialRows initial(owned_, options, column_first, full_dim);
  for (std::int64_t r = 0; r < owned_.rows(); ++r) {
    initial.row(r, scratch_);
    kv::encode_values(type_, scratch_.data(), bytes_of(r), row_width_);
  }
}

StaticInitialRows::StaticInitialRows(const OwnedKeys& owned, const kv::TableOptions& options, std::int32_t column_first,
                                     std::int32_t full_dim)
    : owned_(owned), options_(options), column_first_(column_first), dim_(static_cast<std::int32_t>(options.dim)),
      state_width_(options.training ? static_cast<std::int32_t>(options.optimizer_state_width) : 0),
      num_embeddings_(options.num_embeddings > 0 ? options.num_embeddings : owned.rows()),
      full_(static_cast<std::size_t>(std::max(full_dim, column_first + dim_))) {}

void StaticInitialRows::row(std::int64_t r, std::span<float> out) const {
  const auto dim = static_cast<std::size_t>(dim_);
  EMBSCALE_EXPECTS(out.size() == dim + static_cast<std::size_t>(state_width_), "out holds one row and its state");
  kv::initial_row(options_.initializer, options_.seed, num_embeddings_, static_cast<std::uint64_t>(owned_.key_of(r)),
                  static_cast<std::int64_t>(full_.size()), full_);
  std::copy_n(full_.begin() + column_first_, dim, out.begin());
  const auto& state = options_.initializer.initial_state;
  for (std::size_t s = 0; s < static_cast<std::size_t>(state_width_); ++s)
    out[dim + s] = s < state.size() ? state[s] : 0.0f;
}

std::int64_t StaticRowStore::checked_row(Key key) const {
  const std::int64_t r = owned_.row_of(key);
  if (r < 0) throw Error("static table: received key " + std::to_string(key) + ", which this rank does not own");
  return r;
}

const std::vector<std::uint64_t>& StaticRowStore::rows_in_order(std::span<const Key> keys) {
  EMBSCALE_EXPECTS(keys.size() < (std::uint64_t{1} << 32), "a batch's keys are indexed in 32 bits");
  order_.resize(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    order_[i] = static_cast<std::uint64_t>(checked_row(keys[i])) << 32 | static_cast<std::uint64_t>(i);
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  int row_bits = 0;
  while (row_bits < 63 && (std::int64_t{1} << row_bits) < owned_.rows()) ++row_bits;
  std::vector<std::size_t>& count = radix_count_;
  count.resize(kBuckets);
  order_scratch_.resize(order_.size());
  for (int shift = 32; shift < 32 + row_bits; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (const auto v : order_) ++count[(v >> shift) & (kBuckets - 1)];
    std::size_t at = 0;
    for (auto& c : count) at += std::exchange(c, at);
    for (const auto v : order_) order_scratch_[count[(v >> shift) & (kBuckets - 1)]++] = v;
    order_.swap(order_scratch_);
  }
  return order_;
}

void StaticRowStore::prefetch_row(std::int64_t row) const noexcept {
  const std::byte* bytes = bytes_of(row);
  for (std::size_t b = 0; b < words_per_row_ * sizeof(float); b += kLineBytes) __builtin_prefetch(bytes + b);
}

void StaticRowStore::read(std::span<const Key> keys, std::span<float> rows) {
  const auto dim = static_cast<std::size_t>(dim_);
  EMBSCALE_EXPECTS(rows.size() == keys.size() * dim, "rows must hold keys.size() x dim values");
  const auto& order = rows_in_order(keys);
  for (std::size_t k = 0; k < order.size(); ++k) {
    if (k + kRowsAhead < order.size()) prefetch_row(static_cast<std::int64_t>(order[k + kRowsAhead] >> 32));
    const auto v = order[k];
    kv::decode_values(type_, bytes_of(static_cast<std::int64_t>(v >> 32)), rows.data() + (v & 0xffffffffu) * dim, dim);
  }
  reads_ += static_cast<std::int64_t>(keys.size());
}

bool StaticRowStore::row_pointers(std::span<const Key> keys, std::span<const float*> rows) {
  if (type_ != kv::ValueType::kFloat32) return false;
  EMBSCALE_EXPECTS(rows.size() == keys.size(), "one pointer per key");
  if (const auto begin = owned_.one_block()) {
    // One block of keys: a subtraction and a bounds check per key, no call (a third of the
    // lookup's time at one rank went to row_of and checked_row's calls). A key below the block
    // wraps around to a large unsigned offset and fails the same check.
    const auto count = static_cast<std::uint64_t>(owned_.rows());
    float* const base = rows_.data();
    bool all_owned = true;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const auto row = static_cast<std::uint64_t>(keys[i] - *begin);
      all_owned &= row < count;
      rows[i] = base + (all_owned ? row : 0) * words_per_row_;
    }
    if (!all_owned)
      for (const Key key : keys) checked_row(key);  // throws naming the first key not owned here
  } else {
    for (std::size_t i = 0; i < keys.size(); ++i) rows[i] = fp32_row(checked_row(keys[i]));
  }
  reads_ += static_cast<std::int64_t>(keys.size());
  return true;
}

void StaticRowStore::apply(std::span<const Key> keys, std::span<const float> grads, const SparseOptimizer& optimizer,
                           std::int64_t step) {
  const auto dim = static_cast<std::size_t>(dim_);
  EMBSCALE_EXPECTS(grads.size() == keys.size() * dim, "grads must hold keys.size() x dim values");
  EMBSCALE_EXPECTS(optimizer.state_width() == state_width_, "the store was made for this optimizer's state width");
  const bool in_place = type_ == kv::ValueType::kFloat32;
  // Runs `change(row, state)` on row r: in place for fp32, else decoded into `scratch` (one row,
  // the calling thread's), changed, encoded.
  const auto modify = [&](std::int64_t r, std::vector<float>& scratch, const auto& change) {
    float* values = in_place ? fp32_row(r) : scratch.data();
    if (!in_place) kv::decode_values(type_, bytes_of(r), values, row_width_);
    change(std::span<float>(values, dim), std::span<float>(values + dim, row_width_ - dim));
    if (!in_place) kv::encode_values(type_, values, bytes_of(r), row_width_);
  };
  const bool global = optimizer.update_type() == UpdateType::kGlobal && optimizer.changes_untouched_rows();
  if (global) touched_.assign(static_cast<std::size_t>(owned_.rows()), 0);
  const auto& order = rows_in_order(keys);
  // Visits [begin, end) of the rows in address order; each row and its gradient are prefetched
  // kRowsAhead visits ahead (the gradient's index is in key order: a random access).
  const auto update = [&](std::size_t begin, std::size_t end, std::vector<float>& scratch) {
    for (std::size_t k = begin; k < end; ++k) {
      if (k + kRowsAhead < end) {
        const auto ahead = order[k + kRowsAhead];
        prefetch_row(static_cast<std::int64_t>(ahead >> 32));
        const float* g = grads.data() + (ahead & 0xffffffffu) * dim;
        for (std::size_t d = 0; d < dim; d += kLineBytes / sizeof(float)) __builtin_prefetch(g + d);
      }
      const auto r = static_cast<std::int64_t>(order[k] >> 32);
      const std::size_t i = order[k] & 0xffffffffu;
      modify(r, scratch, [&](std::span<float> row, std::span<float> state) {
        optimizer.update(row, state, grads.subspan(i * dim, dim), step);
      });
      if (global) touched_[static_cast<std::size_t>(r)] = 1;
    }
  };
  // Distinct keys are distinct rows, and the optimizer's methods are const (sparse_optimizer.hpp):
  // threads updating disjoint ranges of rows give the sequential result.
  if (threads_ > 1) {
#pragma omp parallel num_threads(threads_)
    {
      std::vector<float> scratch(row_width_);
      const auto t = static_cast<std::size_t>(omp_get_thread_num()),
                 n = static_cast<std::size_t>(omp_get_num_threads());
      update(order.size() * t / n, order.size() * (t + 1) / n, scratch);
    }
  } else {
    update(0, order.size(), scratch_);
  }
  if (!global) return;
  for (std::int64_t r = 0; r < owned_.rows(); ++r)
    if (!touched_[static_cast<std::size_t>(r)])
      modify(r, scratch_,
             [&](std::span<float> row, std::span<float> state) { optimizer.update_untouched(row, state, step); });
}

bool StaticRowStore::row(Key key, std::span<float> out) const {
  const std::int64_t r = owned_.row_of(key);
  if (r < 0) return false;
  EMBSCALE_EXPECTS(out.size() == static_cast<std::size_t>(dim_), "out must hold dim values");
  kv::decode_values(type_, bytes_of(r), out.data(), out.size());
  return true;
}

void StaticRowStore::for_each_row(const std::function<void(Key, std::span<const float>)>& visit) const {
  std::vector<float> values(static_cast<std::size_t>(dim_));
  for (std::int64_t r = 0; r < owned_.rows(); ++r) {
    kv::decode_values(type_, bytes_of(r), values.data(), values.size());
    visit(owned_.key_of(r), values);
  }
}

namespace {

// The options a static store's checkpoint file is written and read with: its widths and value
// type; the score strategy only fills the header (every score is 0).
kv::TableOptions checkpoint_options(std::int32_t dim, std::int32_t state_width, kv::ValueType type) {
  kv::TableOptions o;
  o.dim = dim;
  o.optimizer_state_width = state_width;
  o.training = true;
  o.value_type = type;
  return o;
}

}  // namespace

std::vector<RowStore::TableClock> StaticRowStore::save_checkpoint(const std::filesystem::path& stem) const {
  const std::filesystem::path path(stem.string() + ".kv");
  check_file_can_be_created(path, "the checkpoint");
  kv::TableFileHeader header = kv::dump_header(checkpoint_options(dim_, state_width_, type_),
                                               static_cast<std::int64_t>(row_width_), kv::KeyType::kInt64);
  header.entry_count = owned_.rows();
  kv::TableFileEncoder encoder(header);
  AtomicFile out(path);
  out.write(encoder.header());
  const std::size_t row_bytes = row_width_ * kv::value_bytes(type_);
  std::vector<std::uint64_t> keys, scores;
  std::vector<std::byte> rows;
  for (std::int64_t first = 0; first < owned_.rows(); first += header.chunk_entries) {
    const auto n = static_cast<std::size_t>(std::min(header.chunk_entries, owned_.rows() - first));
    keys.resize(n);
    scores.assign(n, 0);
    rows.resize(n * row_bytes);
    for (std::size_t i = 0; i < n; ++i) {
      const std::int64_t r = first + static_cast<std::int64_t>(i);
      keys[i] = static_cast<std::uint64_t>(owned_.key_of(r));
      std::memcpy(rows.data() + i * row_bytes, bytes_of(r), row_bytes);
    }
    out.write(encoder.chunk(keys, scores, rows));
  }
  out.write(encoder.trailer());
  out.commit();
  return {};
}

void StaticRowStore::load_checkpoint(const std::filesystem::path& stem, std::span<const TableClock> clocks) {
  const std::filesystem::path path(stem.string() + ".kv");
  if (!clocks.empty())
    throw InputError(path.string() + ": the checkpoint keeps a table clock for this layer; its storage is static");
  const kv::TableFileContents contents = kv::read_dump(path, checkpoint_options(dim_, state_width_, type_),
                                                       static_cast<std::int64_t>(row_width_), kv::KeyType::kInt64);
  // Every owned row exactly once: the file must be this rank's rows of this layer.
  std::vector<std::uint8_t> restored(static_cast<std::size_t>(owned_.rows()), 0);
  for (std::size_t i = 0; i < contents.keys.size(); ++i) {
    const auto key = static_cast<Key>(contents.keys[i]);
    const std::int64_t r = owned_.row_of(key);
    if (r < 0 || restored[static_cast<std::size_t>(r)])
      throw InputError(path.string() + ": key " + std::to_string(key) +
                       (r < 0 ? " is not a row of this rank's part of the layer" : " appears twice") +
                       ": not the checkpoint of this layer on this rank");
    restored[static_cast<std::size_t>(r)] = 1;
    kv::encode_values(type_, contents.values.data() + i * row_width_, bytes_of(r), row_width_);
  }
  if (contents.keys.size() != static_cast<std::size_t>(owned_.rows()))
    throw InputError(path.string() + ": the checkpoint holds " + std::to_string(contents.keys.size()) +
                     " rows of this rank; its part of the layer has " + std::to_string(owned_.rows()));
}

void StaticRowStore::load_resharded_checkpoint(std::span<const std::filesystem::path> stems) {
  std::vector<std::uint8_t> restored(static_cast<std::size_t>(owned_.rows()), 0);
  std::int64_t missing = owned_.rows();
  for (const auto& stem : stems) {  // one file in memory at a time
    const std::filesystem::path path(stem.string() + ".kv");
    const kv::TableFileContents contents = kv::read_dump(path, checkpoint_options(dim_, state_width_, type_),
                                                         static_cast<std::int64_t>(row_width_), kv::KeyType::kInt64);
    for (std::size_t i = 0; i < contents.keys.size(); ++i) {
      const std::int64_t r = owned_.row_of(static_cast<Key>(contents.keys[i]));
      if (r < 0 || restored[static_cast<std::size_t>(r)]) continue;  // another rank's, or a replica's again
      restored[static_cast<std::size_t>(r)] = 1;
      --missing;
      kv::encode_values(type_, contents.values.data() + i * row_width_, bytes_of(r), row_width_);
    }
  }
  if (missing != 0)
    throw InputError((stems.empty() ? std::string("the checkpoint") : stems.front().parent_path().string()) + ": " +
                     std::to_string(missing) + " of the " + std::to_string(owned_.rows()) +
                     " rows this rank owns are in no saved rank's file of the layer: not this layer's checkpoint");
}

StoreCounters StaticRowStore::take_counters() {
  StoreCounters c;
  c.hits = reads_;  // every owned key is held
  reads_ = 0;
  return c;
}

}  // namespace embscale::embedding
