#include "kv/portable_table.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "kv/initializer.hpp"
#include "kv/portable/atomics.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv {
namespace {

using portable::BatchOp;
using portable::BatchRef;
using portable::HostAtomics;
using portable::HostTile;
using portable::TableState;

// Every group of the batch run with a host tile of `Lanes` lanes.
template <unsigned Lanes> void run_groups(const TableState& state, const BatchRef& batch) {
  using Tile = HostTile<Lanes>;
  portable::BatchRunner<Tile, HostAtomics> runner(state, batch);
  const Tile tile;
  const std::uint64_t groups = batch.order ? batch.groups : batch.size;
  for (std::uint64_t g = 0; g < groups; ++g) runner.run_group(tile, g);
}

// Every entry of `from` placed in `to` (a table of more buckets: a bucket's keys go to the buckets
// it splits into, so none overflows), each with its digest, score and row.
template <unsigned Lanes> void move_entries(const portable::TableArrays& from, const portable::TableArrays& to) {
  using Tile = HostTile<Lanes>;
  const Tile tile;
  portable::TableRef<Tile, HostAtomics> target(to);
  const std::uint64_t slots = from.buckets * from.bucket_capacity;
  for (std::uint64_t slot = 0; slot < slots; ++slot) {
    const std::uint64_t key = from.keys[slot];
    if (!portable::holds_key(key)) continue;
    auto place = target.place_of(key);
    const std::uint32_t taken = place.bucket.claim_free(tile, key, place.digest, from.scores[slot], place.start);
    EMBSCALE_EXPECTS(taken != portable::kNoSlot, "a rehash moves a bucket's keys into its halves: none overflows");
    std::memcpy(target.row_at(place.first_slot + taken), from.rows + slot * from.row_width,
                from.row_width * sizeof(float));
  }
}

// The batch's positions grouped by bucket, each group in input order (a stable sort by bucket).
struct BucketGroups {
  std::vector<std::uint32_t> order;
  std::vector<std::uint32_t> offsets;  // groups + 1
};

BucketGroups group_by_bucket(std::span<const std::uint64_t> keys, std::int64_t buckets) {
  std::vector<std::pair<std::uint64_t, std::uint32_t>> tagged(keys.size());
  for (std::size_t i = 0; i < keys.size(); ++i)
    tagged[i] = {mix64(keys[i]) & static_cast<std::uint64_t>(buckets - 1), static_cast<std::uint32_t>(i)};
  std::sort(tagged.begin(), tagged.end());  // by bucket, then by position: input order kept
  BucketGroups g;
  g.order.reserve(keys.size());
  for (std::size_t i = 0; i < tagged.size(); ++i) {
    if (i == 0 || tagged[i].first != tagged[i - 1].first) g.offsets.push_back(static_cast<std::uint32_t>(i));
    g.order.push_back(tagged[i].second);
  }
  g.offsets.push_back(static_cast<std::uint32_t>(keys.size()));
  return g;
}

template <typename T> T* or_null(std::span<T> s) noexcept { return s.empty() ? nullptr : s.data(); }

}  // namespace

PortableTable::PortableTable(TableOptions options) : options_(std::move(options)) {
  check_options(options_);
  if (options_.value_type != ValueType::kFloat32)
    throw InputError("table options: value_type: the GPU table (and its logic on the host) stores float32 rows; got " +
                     to_string(options_.value_type));
  if (!options_.rows_directory.empty())
    throw InputError("table options: rows_directory: the GPU table keeps its rows in memory; got \"" +
                     options_.rows_directory + "\"");
  row_width_ = options_.dim + (options_.training ? options_.optimizer_state_width : 0);
  bucket_capacity_ = options_.bucket_capacity;
  const std::int64_t initial = options_.init_capacity ? options_.init_capacity : options_.max_capacity;
  const std::int64_t buckets = static_cast<std::int64_t>(std::bit_ceil(
      static_cast<std::uint64_t>(std::max<std::int64_t>(1, (initial + bucket_capacity_ - 1) / bucket_capacity_))));
  if (options_.num_embeddings == 0) options_.num_embeddings = options_.max_capacity;
  admission_ = AdmissionFilter(options_.admission, bucket_capacity_, buckets);
  rehash(buckets);
}

portable::TableArrays PortableTable::arrays() const noexcept {
  return portable::TableArrays{keys_.data(),
                               scores_.data(),
                               digests_.data(),
                               rows_.data(),
                               static_cast<std::uint64_t>(buckets_),
                               static_cast<std::uint32_t>(bucket_capacity_),
                               static_cast<std::uint32_t>(row_width_)};
}

void PortableTable::rehash(std::int64_t new_buckets) {
  const auto slots = static_cast<std::size_t>(new_buckets * bucket_capacity_);
  std::vector<std::uint64_t> keys(slots, portable::kEmptyKey), scores(slots, 0);
  std::vector<std::uint8_t> digests(slots, 0);
  std::vector<float> rows(slots * static_cast<std::size_t>(row_width_), 0.0f);
  portable::TableArrays to{keys.data(),
                           scores.data(),
                           digests.data(),
                           rows.data(),
                           static_cast<std::uint64_t>(new_buckets),
                           static_cast<std::uint32_t>(bucket_capacity_),
                           static_cast<std::uint32_t>(row_width_)};
  if (buckets_ > 0) {
    if (tile_lanes() == 32) move_entries<32>(arrays(), to);
    else move_entries<16>(arrays(), to);
  }
  keys_ = std::move(keys);
  scores_ = std::move(scores);
  digests_ = std::move(digests);
  rows_ = std::move(rows);
  buckets_ = new_buckets;
  admission_.resize(new_buckets);  // each new bucket's bank copies its parent's
}

void PortableTable::grow_for(std::int64_t incoming) {
  std::int64_t target = buckets_;
  const auto fits = [&](std::int64_t b) {
    return static_cast<double>(size_ + incoming) <=
           options_.max_load_factor * static_cast<double>(b * bucket_capacity_);
  };
  while (!fits(target) && target * 2 * bucket_capacity_ <= options_.max_capacity) target *= 2;
  if (target != buckets_) rehash(target);
}

void PortableTable::reserve(std::int64_t capacity) {
  std::int64_t target = buckets_;
  while (target * bucket_capacity_ < capacity && target * 2 * bucket_capacity_ <= options_.max_capacity) target *= 2;
  if (target != buckets_) rehash(target);
}

void PortableTable::clear() {
  std::fill(keys_.begin(), keys_.end(), portable::kEmptyKey);
  size_ = 0;
  admission_.clear();
}

std::uint64_t PortableTable::now() const {
  if (options_.clock) return options_.clock();
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
          .count());
}

std::uint64_t PortableTable::get_score() const {
  const ScoreRules& rules = score_rules(options_.score_strategy);
  const std::uint64_t epoch = std::uint64_t{epoch_} << 32;
  const std::uint64_t call = read_call_score(
      rules.call, epoch, custom_score_, [&] { return now(); }, [&] { return step_ + 1; });
  return new_key_score(rules, call, epoch, std::nullopt);
}

TableState PortableTable::state(bool sets_scores, const InitializerArgs& initializer) const {
  TableState s;
  s.arrays = arrays();
  s.rules = &score_rules(options_.score_strategy);
  s.epoch_high = std::uint64_t{epoch_} << 32;
  if (sets_scores)
    s.call_score = read_call_score(
        s.rules->call, s.epoch_high, custom_score_, [&] { return now(); }, [&] { return ++step_; });
  s.sketch = admission_.portable_view();
  s.filter = portable_filter_kind(admission_.kind());
  s.threshold_k = admission_.threshold_k();
  s.initializer = initializer_ref(initializer, options_.seed, options_.num_embeddings, options_.dim);
  return s;
}

CallStats PortableTable::run(BatchRef& batch, const TableState& state, bool reads, Evicted* evicted,
                             std::vector<std::uint8_t>& outcomes) const {
  outcomes.assign(batch.size, 0);
  batch.outcomes = outcomes.data();
  std::vector<std::uint64_t> evicted_keys, evicted_scores;
  std::vector<float> evicted_rows;
  if (evicted) {
    evicted_keys.resize(batch.size);
    evicted_scores.resize(batch.size);
    evicted_rows.resize(batch.size * static_cast<std::size_t>(row_width_));
    batch.evicted_keys = evicted_keys.data();
    batch.evicted_scores = evicted_scores.data();
    batch.evicted_rows = evicted_rows.data();
  }
  BucketGroups groups;
  if (!reads) {
    groups = group_by_bucket({batch.keys, batch.size}, buckets_);
    batch.order = groups.order.data();
    batch.offsets = groups.offsets.data();
    batch.groups = groups.offsets.size() - 1;
  }
  if (tile_lanes() == 32) run_groups<32>(state, batch);
  else run_groups<16>(state, batch);

  CallStats stats;
  const auto w = static_cast<std::size_t>(row_width_);
  for (std::size_t i = 0; i < batch.size; ++i) {
    const std::uint8_t o = outcomes[i];
    stats.found += (o & portable::kKeyFound) != 0;
    stats.inserted += (o & portable::kKeyInserted) != 0;
    stats.evicted += (o & portable::kKeyEvicted) != 0;
    stats.refused += (o & portable::kKeyRefused) != 0;
    stats.not_admitted += (o & portable::kKeyNotAdmitted) != 0;
    if (evicted && (o & portable::kKeyEvicted)) {  // in input order: the CPU table's eviction order
      evicted->keys.push_back(evicted_keys[i]);
      evicted->scores.push_back(evicted_scores[i]);
      evicted->values.insert(evicted->values.end(), evicted_rows.begin() + static_cast<long>(i * w),
                             evicted_rows.begin() + static_cast<long>((i + 1) * w));
    }
  }
  return stats;
}

namespace {

BatchRef batch_of(BatchOp op, std::span<const std::uint64_t> keys) {
  BatchRef b;
  b.op = op;
  b.size = keys.size();
  b.keys = keys.data();
  return b;
}

void copy_founds(const std::vector<std::uint8_t>& outcomes, std::span<std::uint8_t> founds) {
  if (founds.empty()) return;
  for (std::size_t i = 0; i < outcomes.size(); ++i) founds[i] = (outcomes[i] & portable::kKeyFound) != 0;
}

}  // namespace

CallStats PortableTable::find(std::span<const std::uint64_t> keys, std::span<float> values,
                              std::span<std::uint8_t> founds, std::span<std::uint64_t> scores) const {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kFind, keys);
  b.rows_out = or_null(values);
  b.scores_out = or_null(scores);
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(false, options_.initializer), true, nullptr, outcomes);
  copy_founds(outcomes, founds);
  return stats;
}

void PortableTable::contains(std::span<const std::uint64_t> keys, std::span<std::uint8_t> founds) const {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kContains, keys);
  std::vector<std::uint8_t> outcomes;
  run(b, state(false, options_.initializer), true, nullptr, outcomes);
  copy_founds(outcomes, founds);
}

CallStats PortableTable::find_and_update(std::span<const std::uint64_t> keys, std::span<float> values,
                                         std::span<std::uint8_t> founds) {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kFindAndUpdate, keys);
  b.rows_out = or_null(values);
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(true, options_.initializer), false, nullptr, outcomes);
  copy_founds(outcomes, founds);
  return stats;
}

CallStats PortableTable::insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                                          std::span<const std::uint64_t> scores) {
  Evicted* none = nullptr;
  return upsert(keys, values, scores, none);
}

CallStats PortableTable::insert_and_evict(std::span<const std::uint64_t> keys, std::span<const float> values,
                                          std::span<const std::uint64_t> scores, Evicted& evicted) {
  Evicted* out = &evicted;
  return upsert(keys, values, scores, out);
}

CallStats PortableTable::upsert(std::span<const std::uint64_t> keys, std::span<const float> values,
                                std::span<const std::uint64_t> scores, Evicted* evicted) {
  check_table_keys(keys);
  grow_for(static_cast<std::int64_t>(keys.size()));
  BatchRef b = batch_of(BatchOp::kUpsert, keys);
  b.rows_in = values.data();
  b.scores_in = or_null(scores);
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(true, options_.initializer), false, evicted, outcomes);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats PortableTable::find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                                        std::span<std::uint8_t> founds, std::span<const std::uint64_t> scores,
                                        Evicted* evicted) {
  check_table_keys(keys);
  std::vector<std::uint8_t> outcomes;
  if (!options_.training) {  // evaluation: read, never insert, never touch a score
    BatchRef b = batch_of(BatchOp::kEvalFindOrInsert, keys);
    b.rows_out = values.data();
    const CallStats stats = run(b, state(false, options_.eval_initializer), true, nullptr, outcomes);
    copy_founds(outcomes, founds);
    return stats;
  }
  grow_for(static_cast<std::int64_t>(keys.size()));
  BatchRef b = batch_of(BatchOp::kFindOrInsert, keys);
  b.rows_out = values.data();
  b.scores_in = or_null(scores);
  const CallStats stats = run(b, state(true, options_.initializer), false, evicted, outcomes);
  copy_founds(outcomes, founds);
  size_ += stats.inserted - stats.evicted;
  if (stats.refused > 0 && options_.safe_check == SafeCheck::kError)
    throw Error("find_or_insert could not insert " + std::to_string(stats.refused) + " of " +
                std::to_string(keys.size()) +
                " keys (full buckets of higher scores; safe_check_mode ERROR): "
                "raise the capacity or the bucket capacity");
  return stats;
}

CallStats PortableTable::assign(std::span<const std::uint64_t> keys, std::span<const float> values) {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kAssign, keys);
  b.rows_in = values.data();
  std::vector<std::uint8_t> outcomes;
  return run(b, state(false, options_.initializer), false, nullptr, outcomes);
}

CallStats PortableTable::assign_scores(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> scores) {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kAssignScores, keys);
  b.scores_in = or_null(scores);
  std::vector<std::uint8_t> outcomes;
  return run(b, state(true, options_.initializer), false, nullptr, outcomes);
}

CallStats PortableTable::accum_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                                         std::span<const std::uint8_t> accumulate,
                                         std::span<const std::uint64_t> scores) {
  check_table_keys(keys);
  grow_for(static_cast<std::int64_t>(std::count(accumulate.begin(), accumulate.end(), std::uint8_t{0})));
  BatchRef b = batch_of(BatchOp::kAccumOrAssign, keys);
  b.rows_in = values.data();
  b.accumulate = accumulate.data();
  b.scores_in = or_null(scores);
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(true, options_.initializer), false, nullptr, outcomes);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats PortableTable::restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                                 std::span<const std::uint64_t> scores, Evicted* evicted) {
  check_table_keys(keys);
  grow_for(static_cast<std::int64_t>(keys.size()));
  BatchRef b = batch_of(BatchOp::kRestore, keys);
  b.rows_in = values.data();
  b.scores_in = scores.data();
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(false, options_.initializer), false, evicted, outcomes);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats PortableTable::erase(std::span<const std::uint64_t> keys) {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kErase, keys);
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(false, options_.initializer), false, nullptr, outcomes);
  size_ -= stats.found;
  return stats;
}

template <typename Visit>
void PortableTable::for_each_stored(std::int64_t first, std::int64_t end, std::uint64_t min_score,
                                    Visit&& visit) const {
  first = std::max<std::int64_t>(first, 0);
  end = std::min(end, capacity());
  for (std::int64_t slot = first; slot < end; ++slot) {
    const auto at = static_cast<std::size_t>(slot);
    if (portable::holds_key(keys_[at]) && scores_[at] >= min_score) visit(at);
  }
}

std::int64_t PortableTable::erase_if(const std::function<bool(std::uint64_t key, std::uint64_t score)>& predicate) {
  std::int64_t erased = 0;
  for_each_stored(0, capacity(), 0, [&](std::size_t slot) {
    if (!predicate(keys_[slot], scores_[slot])) return;
    keys_[slot] = portable::kReclaimedKey;  // probes go on past it (kv/portable/bucket_ref.hpp)
    ++erased;
  });
  size_ -= erased;
  return erased;
}

std::int64_t PortableTable::export_entries(std::int64_t first, std::int64_t end, std::uint64_t min_score,
                                           std::vector<std::uint64_t>& keys, std::vector<float>& values,
                                           std::vector<std::uint64_t>& scores) const {
  keys.clear();
  values.clear();
  scores.clear();
  const auto w = static_cast<std::size_t>(row_width_);
  for_each_stored(first, end, min_score, [&](std::size_t slot) {
    keys.push_back(keys_[slot]);
    scores.push_back(scores_[slot]);
    values.insert(values.end(), rows_.begin() + static_cast<long>(slot * w),
                  rows_.begin() + static_cast<long>((slot + 1) * w));
  });
  return static_cast<std::int64_t>(keys.size());
}

std::int64_t PortableTable::export_batch(std::int64_t offset, std::int64_t count, std::vector<std::uint64_t>& keys,
                                         std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  return export_entries(offset, offset + count, 0, keys, values, scores);
}

std::int64_t PortableTable::export_batch_if(std::uint64_t threshold, std::vector<std::uint64_t>& keys,
                                            std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  return export_entries(0, capacity(), threshold, keys, values, scores);
}

std::int64_t PortableTable::export_stored(std::uint64_t threshold, std::int64_t chunk_entries,
                                          const std::function<void(const HostTable::ExportSummary&)>& begin,
                                          const std::function<void(const HostTable::StoredEntries&)>& chunk) const {
  EMBSCALE_EXPECTS(chunk_entries >= 1, "export_stored: chunk_entries must be >= 1");
  HostTable::ExportSummary summary;
  for_each_stored(0, capacity(), threshold, [&](std::size_t slot) {
    ++summary.count;
    summary.max_score = std::max(summary.max_score, scores_[slot]);
  });
  summary.score_now = get_score();
  begin(summary);
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> rows;
  const auto emit = [&] {
    chunk({keys, scores, std::as_bytes(std::span<const float>(rows))});
    keys.clear();
    scores.clear();
    rows.clear();
  };
  const auto w = static_cast<std::size_t>(row_width_);
  for_each_stored(0, capacity(), threshold, [&](std::size_t slot) {
    keys.push_back(keys_[slot]);
    scores.push_back(scores_[slot]);
    rows.insert(rows.end(), rows_.begin() + static_cast<long>(slot * w),
                rows_.begin() + static_cast<long>((slot + 1) * w));
    if (static_cast<std::int64_t>(keys.size()) == chunk_entries) emit();
  });
  if (!keys.empty()) emit();
  return summary.count;
}

void PortableTable::set_execution_context(ExecutionContext context) {
  if (!context.on_host())
    throw Error(
        "the portable KV table (the GPU table's logic on the host) keeps its rows in host memory: it cannot "
        "run in a " +
        std::string(memory_space_name(context.memory)) + " context (device " + std::to_string(context.device) +
        "); a GPU run needs the device table");
  context_ = context;
}

}  // namespace embscale::kv
