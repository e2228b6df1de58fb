#include "kv/host_table.hpp"

#include <algorithm>
#include <bit>
#include <cstring>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "kv/digest_match.hpp"
#include "kv/host_table_detail.hpp"
#include "kv/row_codec.hpp"
#include "kv/score_rules.hpp"
#include "kv/victim_search.hpp"

// HostTable's layout, growth, slots and rows (kv/host_table.hpp documents them). The batched
// calls are host_table_calls.cpp, their prefetching loops host_table_pipeline.cpp, the reads of
// every entry host_table_export.cpp.
namespace embscale::kv {

using host_table_detail::digest_of;

HostTable::HostTable(TableOptions options)
    : options_(std::move(options)), match_(best_digest_matcher()), scan_shortlist_(best_shortlist_scan()) {
  check_options(options_);
  row_width_ = options_.dim + (options_.training ? options_.optimizer_state_width : 0);
  bucket_capacity_ = options_.bucket_capacity;
  buckets_ = initial_buckets(options_);
  if (options_.num_embeddings == 0) options_.num_embeddings = options_.max_capacity;
  admission_ = AdmissionFilter(options_.admission, bucket_capacity_, buckets_);
  estimate_new_keys_ = needs_admission_estimate(score_rules(options_.score_strategy));
  halve_scores_ = score_rules(options_.score_strategy).aging == ScoreAging::kHalveWithBank;
  rehash(buckets_);
}

std::uint64_t HostTable::now() const {
  return table_clock_ns(options_) + clock_offset_.load(std::memory_order_relaxed);
}

void HostTable::continue_scores(std::uint64_t score_now) {
  const ScoreContinuation c =
      kv::continue_scores(score_rules(options_.score_strategy), score_now, table_clock_ns(options_));
  if (c.step && *c.step > step_.load(std::memory_order_relaxed)) step_.store(*c.step, std::memory_order_relaxed);
  clock_offset_.store(c.clock_offset, std::memory_order_relaxed);
  if (c.epoch) set_epoch(*c.epoch);
  if (c.set_score) set_score(*c.set_score);
}

std::int64_t HostTable::size() const {
  const GroupLock lock(calls_, Access::kRead);
  return size_;
}

std::int64_t HostTable::capacity() const {
  const GroupLock lock(calls_, Access::kRead);
  return slots();
}

double HostTable::load_factor() const {
  const GroupLock lock(calls_, Access::kRead);
  return static_cast<double>(size_) / static_cast<double>(slots());
}

std::int64_t HostTable::buckets() const {
  const GroupLock lock(calls_, Access::kRead);
  return buckets_;
}

int HostTable::admission_estimate(std::uint64_t key) const {
  const GroupLock lock(calls_, Access::kRead);
  return admission_.estimate(key);
}

std::size_t HostTable::admission_memory_bytes() const {
  const GroupLock lock(calls_, Access::kRead);
  return admission_.memory_bytes();
}

std::uint64_t HostTable::get_score() const {
  // A new key's score in a call made now that gives no score of its own; STEP's next step is
  // peeked at, not taken.
  const ScoreRules& rules = score_rules(options_.score_strategy);
  const std::uint64_t epoch = std::uint64_t{epoch_.load(std::memory_order_relaxed)} << 32;
  const std::uint64_t call = read_call_score(
      rules.call, epoch, custom_score_.load(std::memory_order_relaxed), [&] { return now(); },
      [&] { return step_.load(std::memory_order_relaxed) + 1; });
  return new_key_score(rules, call, epoch, std::nullopt);
}

void HostTable::check_keys(std::span<const std::uint64_t> keys) const { check_table_keys(keys); }

void check_table_keys(std::span<const std::uint64_t> keys) {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] >= kFirstReservedKey)
      throw InputError("key " + std::to_string(static_cast<std::int64_t>(keys[i])) + " (position " + std::to_string(i) +
                       "): the keys 2^64-3 .. 2^64-1 (int64 -3 .. -1) are reserved");
}

void HostTable::rehash(std::int64_t new_buckets) {
  // Moves every entry into a table of new_buckets buckets (a power of two, at least the old
  // count): bucket b's keys go to b or b + old count, so no bucket overflows.
  const auto slots = static_cast<std::size_t>(new_buckets * bucket_capacity_);
  std::vector<std::uint8_t> digests(slots + kDigestReadBytes);  // the matcher reads 64 bytes
  std::vector<std::uint64_t> keys(slots);
  std::vector<std::uint64_t> scores(slots);
  std::vector<std::uint32_t> occupied(static_cast<std::size_t>(new_buckets), 0);
  const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
  MappedArray rows(slots * row_bytes, options_.rows_directory);
  for (std::int64_t b = 0; b < static_cast<std::int64_t>(occupied_.size()); ++b)
    for (std::uint32_t i = 0; i < occupied_[static_cast<std::size_t>(b)]; ++i) {
      const auto from = static_cast<std::size_t>(b * bucket_capacity_ + i);
      const std::uint64_t hash = mix64(keys_[from]);
      const auto nb = static_cast<std::size_t>(hash & static_cast<std::uint64_t>(new_buckets - 1));
      const auto to = nb * static_cast<std::size_t>(bucket_capacity_) + occupied[nb]++;
      digests[to] = digests_[from];
      keys[to] = keys_[from];
      scores[to] = scores_[from];
      std::memcpy(rows.data() + to * row_bytes, rows_.data() + from * row_bytes, row_bytes);
    }
  digests_ = std::move(digests);
  keys_ = std::move(keys);
  scores_ = std::move(scores);
  occupied_ = std::move(occupied);
  rows_ = std::move(rows);
  buckets_ = new_buckets;
  admission_.resize(new_buckets);  // each new bucket's bank copies its parent's
  shortlists_.assign(static_cast<std::size_t>(new_buckets), VictimShortlist{});
  bucket_locks_ = std::make_unique<std::atomic<std::uint8_t>[]>(static_cast<std::size_t>(new_buckets));
}

void HostTable::grow_for(std::int64_t incoming) {
  const std::int64_t target = buckets_for_incoming(options_, buckets_, size_, incoming);
  if (target != buckets_) rehash(target);
}

void HostTable::set_execution_context(ExecutionContext context) {
  if (!context.on_host())
    throw Error("the host KV table keeps its rows in host memory: it cannot run in a " +
                std::string(memory_space_name(context.memory)) + " context (device " + std::to_string(context.device) +
                "); a GPU run needs a device table");
  context_ = context;
}

void HostTable::reserve(std::int64_t capacity) {
  const GroupLock lock(calls_, Access::kExclusive);
  const std::int64_t target = buckets_for_capacity(options_, buckets_, capacity);
  if (target != buckets_) rehash(target);
}

void HostTable::clear() {
  const GroupLock lock(calls_, Access::kExclusive);
  std::fill(occupied_.begin(), occupied_.end(), 0u);
  std::fill(shortlists_.begin(), shortlists_.end(), VictimShortlist{});
  size_ = 0;
  admission_.clear();
}

HostTable::Slot HostTable::locate(std::uint64_t key) const noexcept {
  const std::uint64_t hash = mix64(key);
  const auto bucket = static_cast<std::int64_t>(hash & static_cast<std::uint64_t>(buckets_ - 1));
  const std::size_t base = static_cast<std::size_t>(bucket * bucket_capacity_);
  const std::uint32_t occupied = occupied_[static_cast<std::size_t>(bucket)];
  const std::uint8_t digest = digest_of(hash);
  for (std::uint32_t chunk = 0; chunk < occupied; chunk += 64) {
    std::uint64_t candidates = match_(digests_.data() + base + chunk, std::min(occupied - chunk, 64u), digest);
    while (candidates) {  // a digest match is a candidate: the key decides
      const auto i = chunk + static_cast<std::uint32_t>(std::countr_zero(candidates));
      if (keys_[base + i] == key) return {bucket, static_cast<std::int64_t>(i)};
      candidates &= candidates - 1;
    }
  }
  return {bucket, -1};
}

void HostTable::sighted(std::int64_t bucket, std::uint64_t key) noexcept {
  if (!admission_.record(key) || !halve_scores_) return;
  // The bank aged: so do the bucket's scores (ScoreAging::kHalveWithBank). Halving keeps their
  // order but can make two of them equal, where the smaller key now goes first: the shortlist
  // is refilled on the next eviction.
  const auto base = static_cast<std::size_t>(bucket * bucket_capacity_);
  const std::uint32_t occupied = occupied_[static_cast<std::size_t>(bucket)];
  for (std::uint32_t i = 0; i < occupied; ++i) scores_[base + i] >>= 1;
  shortlists_[static_cast<std::size_t>(bucket)].count = 0;
}

void HostTable::rescore(Slot slot, std::uint64_t score) noexcept {
  auto& stored = scores_[static_cast<std::size_t>(flat(slot))];
  shortlists_[static_cast<std::size_t>(slot.bucket)].score_changed(static_cast<std::uint32_t>(slot.index), stored,
                                                                   score);
  stored = score;
}

void HostTable::remove(Slot slot) noexcept {
  auto& occupied = occupied_[static_cast<std::size_t>(slot.bucket)];
  const std::int64_t last = occupied - 1;
  if (slot.index != last) {  // keep the occupied slots first: the last one fills the hole
    const auto to = static_cast<std::size_t>(flat(slot));
    const auto from = static_cast<std::size_t>(slot.bucket * bucket_capacity_ + last);
    digests_[to] = digests_[from];
    keys_[to] = keys_[from];
    scores_[to] = scores_[from];
    const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
    std::memcpy(rows_.data() + to * row_bytes, rows_.data() + from * row_bytes, row_bytes);
  }
  --occupied;
  shortlists_[static_cast<std::size_t>(slot.bucket)].count = 0;  // kept for full buckets only
}

void HostTable::read_row(std::int64_t flat_slot, std::span<float> out) const noexcept {
  const auto n = static_cast<std::size_t>(row_width_);
  const std::byte* row = rows_.data() + static_cast<std::size_t>(flat_slot) * n * value_bytes(options_.value_type);
  decode_values(options_.value_type, row, out.data(), n);
}

void HostTable::write_row(std::int64_t flat_slot, std::span<const float> in) noexcept {
  const auto n = static_cast<std::size_t>(row_width_);
  std::byte* row = rows_.data() + static_cast<std::size_t>(flat_slot) * n * value_bytes(options_.value_type);
  encode_values(options_.value_type, in.data(), row, n);
}

void HostTable::add_to_row(std::int64_t flat_slot, std::span<const float> delta) noexcept {
  // Each value added in float, then stored: a stack chunk at a time, no allocation per call.
  constexpr std::size_t kChunk = 64;
  const auto n = static_cast<std::size_t>(row_width_);
  const std::size_t bytes = value_bytes(options_.value_type);
  std::byte* row = rows_.data() + static_cast<std::size_t>(flat_slot) * n * bytes;
  float values[kChunk];
  for (std::size_t first = 0; first < n; first += kChunk) {
    const std::size_t count = std::min(kChunk, n - first);
    decode_values(options_.value_type, row + first * bytes, values, count);
    for (std::size_t d = 0; d < count; ++d) values[d] += delta[first + d];
    encode_values(options_.value_type, values, row + first * bytes, count);
  }
}

}  // namespace embscale::kv
