#include "kv/portable_table.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <utility>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "kv/host_executor.hpp"
#include "kv/initializer.hpp"
#include "kv/score_rules.hpp"

namespace embscale::kv {
namespace {

using portable::BatchOp;
using portable::BatchRef;
using portable::TableState;

template <typename T> T* or_null(std::span<T> s) noexcept { return s.empty() ? nullptr : s.data(); }

}  // namespace

PortableTable::PortableTable(TableOptions options)
    : PortableTable(std::move(options), [](const TableGeometry& g) { return std::make_unique<HostExecutor>(g); }) {}

PortableTable::PortableTable(TableOptions options, const ExecutorFactory& make_executor)
    : options_(std::move(options)) {
  check_options(options_);
  if (options_.value_type != ValueType::kFloat32)
    throw InputError("table options: value_type: the GPU table (and its logic on the host) stores float32 rows; got " +
                     to_string(options_.value_type));
  if (!options_.rows_directory.empty())
    throw InputError("table options: rows_directory: the GPU table keeps its rows in memory; got \"" +
                     options_.rows_directory + "\"");
  check_admission_options(options_.admission);
  row_width_ = options_.dim + (options_.training ? options_.optimizer_state_width : 0);
  bucket_capacity_ = options_.bucket_capacity;
  const std::int64_t buckets = initial_buckets(options_);
  if (options_.num_embeddings == 0) options_.num_embeddings = options_.max_capacity;
  geometry_.bucket_capacity = static_cast<std::uint32_t>(bucket_capacity_);
  geometry_.row_width = static_cast<std::uint32_t>(row_width_);
  geometry_.filter = portable_filter_kind(options_.admission.kind);
  geometry_.max_hbm_for_rows = options_.max_hbm_for_rows;
  if (geometry_.filter != portable::FilterKind::kNone)
    geometry_.sketch = sketch_layout(options_.admission, bucket_capacity_, buckets);
  executor_ = make_executor(geometry_);
  resize(buckets);
}

void PortableTable::resize(std::int64_t buckets) {
  executor_->resize(static_cast<std::uint64_t>(buckets));
  buckets_ = buckets;
}

void PortableTable::grow_for(std::int64_t incoming) {
  const std::int64_t target = buckets_for_incoming(options_, buckets_, size_, incoming);
  if (target != buckets_) resize(target);
}

void PortableTable::reserve(std::int64_t capacity) {
  const std::int64_t target = buckets_for_capacity(options_, buckets_, capacity);
  if (target != buckets_) resize(target);
}

void PortableTable::clear() {
  executor_->clear();
  size_ = 0;
}

std::uint64_t PortableTable::now() const { return table_clock_ns(options_) + clock_offset_; }

void PortableTable::continue_scores(std::uint64_t score_now) {
  const ScoreContinuation c =
      kv::continue_scores(score_rules(options_.score_strategy), score_now, table_clock_ns(options_));
  if (c.step) step_ = std::max(step_, *c.step);
  clock_offset_ = c.clock_offset;
  if (c.epoch) set_epoch(*c.epoch);
  if (c.set_score) set_score(*c.set_score);
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
  s.rules = score_rules(options_.score_strategy);
  s.epoch_high = std::uint64_t{epoch_} << 32;
  if (sets_scores)
    s.call_score = read_call_score(
        s.rules.call, s.epoch_high, custom_score_, [&] { return now(); }, [&] { return ++step_; });
  s.filter = geometry_.filter;
  s.threshold_k = options_.admission.threshold_k;
  s.initializer = initializer_ref(initializer, options_.seed, options_.num_embeddings, options_.dim);
  return s;
}

CallStats PortableTable::run(BatchRef& batch, const TableState& state, bool reads, Evicted* evicted,
                             std::vector<std::uint8_t>& outcomes, bool resident) const {
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
  if (resident) executor_->run_resident(state, batch, !reads);
  else executor_->run(state, batch, !reads);

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

ReservedKeyError::ReservedKeyError(std::size_t position)
    : InputError("the key at position " + std::to_string(position) +
                 " of a batch on the device is reserved: the keys 2^64-3 .. 2^64-1 (int64 -3 .. -1) mark the "
                 "table's slots"),
      position_(position) {}

void PortableTable::refuse_reserved(const std::vector<std::uint8_t>& outcomes) {
  const auto reserved =
      std::find_if(outcomes.begin(), outcomes.end(), [](std::uint8_t o) { return (o & portable::kKeyReserved) != 0; });
  if (reserved != outcomes.end()) throw ReservedKeyError(static_cast<std::size_t>(reserved - outcomes.begin()));
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
  check_refusals(options_, stats.refused, keys.size());
  return stats;
}

CallStats PortableTable::assign(std::span<const std::uint64_t> keys, std::span<const float> values) {
  check_table_keys(keys);
  BatchRef b = batch_of(BatchOp::kAssign, keys);
  b.rows_in = values.data();
  std::vector<std::uint8_t> outcomes;
  return run(b, state(false, options_.initializer), false, nullptr, outcomes);
}

CallStats PortableTable::find_or_insert_resident(std::span<const std::uint64_t> keys, float* rows) {
  std::vector<std::uint8_t> outcomes;
  if (!options_.training) {  // evaluation: read, never insert, never touch a score
    BatchRef b = batch_of(BatchOp::kEvalFindOrInsert, keys);
    b.rows_out = rows;
    const CallStats stats = run(b, state(false, options_.eval_initializer), true, nullptr, outcomes, true);
    refuse_reserved(outcomes);
    return stats;
  }
  grow_for(static_cast<std::int64_t>(keys.size()));
  BatchRef b = batch_of(BatchOp::kFindOrInsert, keys);
  b.rows_out = rows;
  const CallStats stats = run(b, state(true, options_.initializer), false, nullptr, outcomes, true);
  size_ += stats.inserted - stats.evicted;
  refuse_reserved(outcomes);
  check_refusals(options_, stats.refused, keys.size());
  return stats;
}

CallStats PortableTable::find_resident(std::span<const std::uint64_t> keys, float* rows) const {
  BatchRef b = batch_of(BatchOp::kFind, keys);
  b.rows_out = rows;
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(false, options_.initializer), true, nullptr, outcomes, true);
  refuse_reserved(outcomes);
  return stats;
}

CallStats PortableTable::assign_resident(std::span<const std::uint64_t> keys, const float* rows) {
  BatchRef b = batch_of(BatchOp::kAssign, keys);
  b.rows_in = rows;
  std::vector<std::uint8_t> outcomes;
  const CallStats stats = run(b, state(false, options_.initializer), false, nullptr, outcomes, true);
  refuse_reserved(outcomes);
  return stats;
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

std::int64_t PortableTable::erase_if(const std::function<bool(std::uint64_t key, std::uint64_t score)>& predicate) {
  // Every entry read out, the predicate asked on the host, the chosen keys erased in one call.
  std::vector<std::uint64_t> keys, scores, chosen;
  std::vector<float> values;
  executor_->export_entries(0, static_cast<std::uint64_t>(capacity()), 0, keys, values, scores);
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (predicate(keys[i], scores[i])) chosen.push_back(keys[i]);
  return erase(chosen).found;
}

std::int64_t PortableTable::export_batch(std::int64_t offset, std::int64_t count, std::vector<std::uint64_t>& keys,
                                         std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  const std::int64_t first = std::clamp<std::int64_t>(offset, 0, capacity());
  const std::int64_t end = std::clamp<std::int64_t>(offset + count, first, capacity());
  executor_->export_entries(static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(end), 0, keys, values,
                            scores);
  return static_cast<std::int64_t>(keys.size());
}

std::int64_t PortableTable::export_resident(std::int64_t offset, std::int64_t count, std::uint64_t* keys,
                                            float* rows) const {
  const std::int64_t first = std::clamp<std::int64_t>(offset, 0, capacity());
  const std::int64_t end = std::clamp<std::int64_t>(offset + count, first, capacity());
  return static_cast<std::int64_t>(
      executor_->export_resident(static_cast<std::uint64_t>(first), static_cast<std::uint64_t>(end), keys, rows));
}

std::int64_t PortableTable::export_batch_if(std::uint64_t threshold, std::vector<std::uint64_t>& keys,
                                            std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  executor_->export_entries(0, static_cast<std::uint64_t>(capacity()), threshold, keys, values, scores);
  return static_cast<std::int64_t>(keys.size());
}

std::int64_t PortableTable::export_stored(std::uint64_t threshold, std::int64_t chunk_entries,
                                          const std::function<void(const HostTable::ExportSummary&)>& begin,
                                          const std::function<void(const HostTable::StoredEntries&)>& chunk) const {
  EMBSCALE_EXPECTS(chunk_entries >= 1, "export_stored: chunk_entries must be >= 1");
  std::vector<std::uint64_t> keys, scores;
  std::vector<float> values;
  export_batch_if(threshold, keys, values, scores);
  HostTable::ExportSummary summary;
  summary.count = static_cast<std::int64_t>(keys.size());
  for (const std::uint64_t s : scores) summary.max_score = std::max(summary.max_score, s);
  summary.score_now = get_score();
  begin(summary);
  const auto w = static_cast<std::size_t>(row_width_);
  for (std::size_t first = 0; first < keys.size(); first += static_cast<std::size_t>(chunk_entries)) {
    const std::size_t n = std::min(keys.size() - first, static_cast<std::size_t>(chunk_entries));
    chunk({std::span(keys).subspan(first, n), std::span(scores).subspan(first, n),
           std::as_bytes(std::span<const float>(values).subspan(first * w, n * w))});
  }
  return summary.count;
}

void PortableTable::set_execution_context(ExecutionContext context) {
  if (!context.on_host())
    throw Error(
        "this KV table takes its calls' keys and rows in host memory (the GPU table copies them to and from "
        "the GPU itself): it cannot run in a " +
        std::string(memory_space_name(context.memory)) + " context (device " + std::to_string(context.device) + ")");
  context_ = context;
}

}  // namespace embscale::kv
