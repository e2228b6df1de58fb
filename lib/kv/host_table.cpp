#include "kv/host_table.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstring>
#include <iostream>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "kv/bucket_partition.hpp"
#include "kv/digest_match.hpp"
#include "kv/initializer.hpp"
#include "kv/row_codec.hpp"
#include "kv/score_rules.hpp"
#include "kv/victim_search.hpp"

namespace embscale::kv {
namespace {

std::uint8_t digest_of(std::uint64_t hash) noexcept { return static_cast<std::uint8_t>(hash >> 56); }

// Prefetches the cache lines of [p, p + bytes), to read or to write.
void prefetch_lines(const void* p, std::size_t bytes) noexcept {
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(static_cast<const std::byte*>(p) + line);
}
void prefetch_lines_to_write(const void* p, std::size_t bytes) noexcept {
  for (std::size_t line = 0; line < bytes; line += 64) __builtin_prefetch(static_cast<const std::byte*>(p) + line, 1);
}

}  // namespace

// The scores one score-setting call gives, by its strategy's rules (kv/score_rules.hpp): the
// epoch, the clock and the step are read once per call; `custom` holds the caller's scores, one
// per key, or is empty.
class HostTable::CallScores {
 public:
  CallScores(HostTable& table, std::span<const std::uint64_t> custom)
      : rules_(score_rules(table.options_.score_strategy)),
        custom_(custom),
        epoch_(std::uint64_t{table.epoch_.load(std::memory_order_relaxed)} << 32),
        call_score_(read_call_score(
            rules_.call, epoch_, table.custom_score_.load(std::memory_order_relaxed), [&] { return table.now(); },
            [&] { return table.step_.fetch_add(1, std::memory_order_relaxed) + 1; })) {}
  // The score of key i when it is new; `estimate`: the admission filter's estimate of it, which
  // only strategies with NewKeyRule::kEstimate read (HostTable::insert_new computes it for them).
  std::uint64_t fresh(std::size_t i, int estimate = 0) const noexcept {
    return new_key_score(rules_, call_score_, epoch_, custom_.empty() ? std::nullopt : std::optional(custom_[i]),
                         estimate);
  }
  // The score of key i when it was present with `old`.
  std::uint64_t touched(std::size_t i, std::uint64_t old) const noexcept {
    return present_key_score(rules_, old, fresh(i), epoch_);
  }

 private:
  const ScoreRules& rules_;
  std::span<const std::uint64_t> custom_;
  std::uint64_t epoch_;  // the epoch, in the high 32 bits
  std::uint64_t call_score_;
};

class HostTable::BucketLock {
 public:
  BucketLock(const HostTable& table, std::int64_t bucket) noexcept
      : flag_(table.bucket_locks_[static_cast<std::size_t>(bucket)]) {
    while (flag_.exchange(1, std::memory_order_acquire))
      while (flag_.load(std::memory_order_relaxed)) {
      }
  }
  ~BucketLock() { flag_.store(0, std::memory_order_release); }
  BucketLock(const BucketLock&) = delete;
  BucketLock& operator=(const BucketLock&) = delete;

 private:
  std::atomic<std::uint8_t>& flag_;
};

HostTable::HostTable(TableOptions options) : options_(std::move(options)), match_(best_digest_matcher()), scan_shortlist_(best_shortlist_scan()) {
  check_options(options_);
  row_width_ = options_.dim + (options_.training ? options_.optimizer_state_width : 0);
  bucket_capacity_ = options_.bucket_capacity;
  const std::int64_t initial = options_.init_capacity ? options_.init_capacity : options_.max_capacity;
  buckets_ = static_cast<std::int64_t>(
      std::bit_ceil(static_cast<std::uint64_t>(std::max<std::int64_t>(1, (initial + bucket_capacity_ - 1) / bucket_capacity_))));
  if (options_.num_embeddings == 0) options_.num_embeddings = options_.max_capacity;
  admission_ = AdmissionFilter(options_.admission, bucket_capacity_, buckets_);
  estimate_new_keys_ = needs_admission_estimate(score_rules(options_.score_strategy));
  halve_scores_ = score_rules(options_.score_strategy).aging == ScoreAging::kHalveWithBank;
  rehash(buckets_);
}

std::uint64_t HostTable::now() const {
  if (options_.clock) return options_.clock();
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
      std::chrono::steady_clock::now().time_since_epoch()).count());
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

void HostTable::check_keys(std::span<const std::uint64_t> keys) const {
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (keys[i] >= kFirstReservedKey)
      throw InputError("key " + std::to_string(static_cast<std::int64_t>(keys[i])) + " (position " +
                       std::to_string(i) + "): the keys 2^64-3 .. 2^64-1 (int64 -3 .. -1) are reserved");
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
  std::int64_t target = buckets_;
  const auto fits = [&](std::int64_t b) {
    return static_cast<double>(size_ + incoming) <= options_.max_load_factor * static_cast<double>(b * bucket_capacity_);
  };
  while (!fits(target) && target * 2 * bucket_capacity_ <= options_.max_capacity) target *= 2;
  if (target != buckets_) rehash(target);
}

void HostTable::reserve(std::int64_t capacity) {
  const GroupLock lock(calls_, Access::kExclusive);
  std::int64_t target = buckets_;
  while (target * bucket_capacity_ < capacity && target * 2 * bucket_capacity_ <= options_.max_capacity) target *= 2;
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

template <typename NewScore>
HostTable::Slot HostTable::insert_new(std::uint64_t key, NewScore&& new_score, CallStats& stats, Evicted* evicted,
                                      bool filtered) {
  const std::uint64_t hash = mix64(key);
  const auto bucket = static_cast<std::int64_t>(hash & static_cast<std::uint64_t>(buckets_ - 1));
  const std::size_t base = static_cast<std::size_t>(bucket * bucket_capacity_);
  auto& occupied = occupied_[static_cast<std::size_t>(bucket)];
  filtered = filtered && admission_.enabled();
  // The newcomer's sighting first (it may age the bucket's bank, and with it the bucket's scores
  // under FREQUENCY); then its score, which under FREQUENCY is the estimate that includes it.
  if (filtered) sighted(bucket, key);
  const std::uint64_t score = new_score(filtered && estimate_new_keys_ ? admission_.estimate(key) : 0);
  std::int64_t index;
  if (occupied < static_cast<std::uint32_t>(bucket_capacity_)) {
    if (filtered && !admission_.admits(key, Placement::kFreeSlot, 0)) {
      ++stats.not_admitted;
      return {bucket, kNotAdmittedIndex};
    }
    index = occupied++;
  } else {
    // The victim: the lowest score, ties broken by the smallest key (independent of slot order),
    // the first of the bucket's shortlist (kv/victim_search.hpp), which one scan refills.
    VictimShortlist& shortlist = shortlists_[static_cast<std::size_t>(bucket)];
    if (shortlist.count == 0)
      scan_shortlist_(scores_.data() + base, keys_.data() + base, static_cast<std::uint32_t>(bucket_capacity_), shortlist);
    const std::size_t victim = base + shortlist.slots[0];
    if (score < scores_[victim]) {
      ++stats.refused;  // its sighting is recorded all the same
      return {bucket, kRefusedIndex};
    }
    if (filtered && !admission_.admits(key, Placement::kEvict, keys_[victim])) {
      ++stats.not_admitted;
      return {bucket, kNotAdmittedIndex};
    }
    index = static_cast<std::int64_t>(victim - base);
    ++stats.evicted;
    if (evicted) {
      evicted->keys.push_back(keys_[victim]);
      evicted->scores.push_back(scores_[victim]);
      const auto at = evicted->values.size();
      evicted->values.resize(at + static_cast<std::size_t>(row_width_));
      read_row(static_cast<std::int64_t>(victim), std::span<float>(evicted->values).subspan(at));
    }
    shortlist.pop_front();
    // The newcomer takes the victim's slot: the shortlist stays true when it orders after the
    // shortlist's last entry (under TIMESTAMP and STEP it usually does: its score is the newest).
    if (shortlist.count > 0) {
      const std::size_t last = base + shortlist.slots[shortlist.count - 1];
      if (score < scores_[last] || (score == scores_[last] && key < keys_[last])) shortlist.count = 0;
    }
  }
  const std::size_t slot = base + static_cast<std::size_t>(index);
  digests_[slot] = digest_of(hash);
  keys_[slot] = key;
  scores_[slot] = score;
  ++stats.inserted;
  return {bucket, index};
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
  shortlists_[static_cast<std::size_t>(slot.bucket)].score_changed(static_cast<std::uint32_t>(slot.index), stored, score);
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

void HostTable::prefetch_bucket(std::uint64_t key) const noexcept {
  const auto bucket = static_cast<std::size_t>(mix64(key) & static_cast<std::uint64_t>(buckets_ - 1));
  const std::size_t base = bucket * static_cast<std::size_t>(bucket_capacity_);
  __builtin_prefetch(digests_.data() + base);
  if (bucket_capacity_ > 64) __builtin_prefetch(digests_.data() + base + 64);
  __builtin_prefetch(occupied_.data() + bucket);
  admission_.prefetch(key);  // the key's block of counters (one line), which every key records
}

void HostTable::prefetch_slot(std::uint64_t key) const noexcept {
  const std::uint64_t hash = mix64(key);
  const auto bucket = static_cast<std::size_t>(hash & static_cast<std::uint64_t>(buckets_ - 1));
  const std::size_t base = bucket * static_cast<std::size_t>(bucket_capacity_);
  const std::uint32_t occupied = occupied_[bucket];  // prefetched by prefetch_bucket
  int candidates = 0;
  for (std::uint32_t chunk = 0; chunk < occupied && candidates < 2; chunk += 64)
    for (std::uint64_t c = match_(digests_.data() + base + chunk, std::min(occupied - chunk, 64u), digest_of(hash));
         c && candidates < 2; c &= c - 1, ++candidates)
      __builtin_prefetch(keys_.data() + base + chunk + static_cast<std::size_t>(std::countr_zero(c)));
  if (candidates > 0) return;  // most likely present: prefetch_present_row follows
  if (occupied < static_cast<std::uint32_t>(bucket_capacity_)) {  // the free slot a new key takes
    const std::size_t slot = base + occupied;
    __builtin_prefetch(keys_.data() + slot, 1);
    __builtin_prefetch(scores_.data() + slot, 1);
    const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
    prefetch_lines_to_write(rows_.data() + slot * row_bytes, row_bytes);
  } else {  // a full bucket: the scores the victim search reads
    for (std::size_t at = 0; at < static_cast<std::size_t>(bucket_capacity_); at += 8) __builtin_prefetch(scores_.data() + base + at);
  }
}

void HostTable::prefetch_present_row(std::uint64_t key) const noexcept {
  const Slot s = locate(key);  // its digests and candidate keys prefetched by the stages before
  if (s.index < 0) return;
  const auto slot = static_cast<std::size_t>(flat(s));
  __builtin_prefetch(scores_.data() + slot, 1);
  const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
  prefetch_lines_to_write(rows_.data() + slot * row_bytes, row_bytes);
}

CallStats HostTable::for_each_key(std::span<const std::uint64_t> keys, const PerKey& per_key, Evicted* evicted,
                                  std::span<const float> rows) const {
  const std::size_t threads = static_cast<std::size_t>(std::max(1, context_.threads));
  if (threads == 1 || static_cast<std::int64_t>(keys.size()) < context_.min_keys_for_threads) {
    CallStats stats;
    for (std::size_t i = 0; i < keys.size(); ++i) {
      if (i + kPrefetchAhead < keys.size()) prefetch_bucket(keys[i + kPrefetchAhead]);
      if (i + kPrefetchAhead / 2 < keys.size()) prefetch_slot(keys[i + kPrefetchAhead / 2]);
      if (i + kPrefetchAhead / 4 < keys.size()) prefetch_present_row(keys[i + kPrefetchAhead / 4]);
      per_key(i, stats, evicted);
    }
    return stats;
  }
  // Several groups per thread, so that a thread with heavy buckets does not hold up the rest.
  const BucketPartition partition = partition_by_bucket(keys, buckets_, std::min<std::size_t>(4 * threads, 4096));
  const std::size_t groups = partition.groups();
  std::vector<CallStats> stats(groups);
  std::vector<Evicted> group_evicted(evicted ? groups : 0);
  std::vector<std::vector<std::uint32_t>> evicted_by(evicted ? groups : 0);  // the evicting key's index
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast<int>(threads))
  for (std::size_t g = 0; g < groups; ++g) {
    Evicted* mine = evicted ? &group_evicted[g] : nullptr;
    for (std::size_t at = partition.starts[g]; at < partition.starts[g + 1]; ++at) {
      if (at + kPrefetchAhead < partition.starts[g + 1]) prefetch_bucket(keys[partition.order[at + kPrefetchAhead]]);
      if (at + kPrefetchAhead / 2 < partition.starts[g + 1]) prefetch_slot(keys[partition.order[at + kPrefetchAhead / 2]]);
      if (at + kPrefetchAhead / 4 < partition.starts[g + 1]) {
        const std::uint32_t ahead = partition.order[at + kPrefetchAhead / 4];
        prefetch_present_row(keys[ahead]);
        // The call's row of that key: in bucket-group order, rows are read out of input order.
        if (!rows.empty()) prefetch_lines(rows.data() + static_cast<std::size_t>(ahead) * static_cast<std::size_t>(row_width_),
                                          static_cast<std::size_t>(row_width_) * sizeof(float));
      }
      const std::size_t before = mine ? mine->keys.size() : 0;
      per_key(partition.order[at], stats[g], mine);
      if (mine && mine->keys.size() > before) evicted_by[g].push_back(partition.order[at]);
    }
  }
  CallStats total;
  for (const auto& st : stats) total += st;
  if (evicted) {  // in input order, as one key at a time would have produced them
    std::vector<std::pair<std::uint32_t, std::pair<std::size_t, std::size_t>>> order;
    for (std::size_t g = 0; g < groups; ++g)
      for (std::size_t e = 0; e < evicted_by[g].size(); ++e) order.push_back({evicted_by[g][e], {g, e}});
    std::sort(order.begin(), order.end());
    const auto w = static_cast<std::size_t>(row_width_);
    for (const auto& [index, where] : order) {
      const auto& from = group_evicted[where.first];
      evicted->keys.push_back(from.keys[where.second]);
      evicted->scores.push_back(from.scores[where.second]);
      const auto row = from.values.begin() + static_cast<long>(where.second * w);
      evicted->values.insert(evicted->values.end(), row, row + static_cast<long>(w));
    }
  }
  return total;
}

std::int64_t HostTable::find_range(std::span<const std::uint64_t> keys, std::size_t begin, std::size_t end,
                                   std::span<float> values, std::span<std::uint8_t> founds,
                                   std::span<std::uint64_t> scores) const noexcept {
  // A rolling software pipeline, one key per step: at step i the digests of key i + kDigestsAhead
  // are prefetched, the digests of key i + kKeysAhead are matched (its candidate
  // keys prefetched), the candidates of key i + kRowAhead are compared (its row prefetched), and
  // key i's row is copied. Every stage's miss has a fixed number of steps to arrive, so the misses
  // of about kDigestsAhead keys overlap (a one-key-at-a-time lookup waits for each in turn).
  constexpr std::size_t kDigestsAhead = 48, kKeysAhead = 24, kRowAhead = 12;
  constexpr std::size_t kRing = 64;  // > kDigestsAhead, a power of two
  constexpr int kCandidates = 2;     // kept per key; more (rare: n/256 false ones expected) -> locate()
  struct InFlight {
    std::uint64_t hash;
    std::int64_t slot;                     // flat slot, -1 absent; set at the key-compare stage
    std::int64_t candidates[kCandidates];  // flat slots whose digest matched
    int count;                             // of candidates; kCandidates + 1: too many, use locate()
  };
  InFlight ring[kRing];
  const auto bucket_mask = static_cast<std::uint64_t>(buckets_ - 1);
  const auto bc = static_cast<std::size_t>(bucket_capacity_);
  constexpr std::size_t kMaxDigestLines = 2;  // prefetched per key: 128 slots; larger buckets' rest miss
  const auto w = static_cast<std::size_t>(row_width_);
  const std::size_t row_bytes = w * value_bytes(options_.value_type);

  const auto prefetch_digests = [&](std::size_t i) {
    InFlight& f = ring[i % kRing];
    f.hash = mix64(keys[i]);
    const auto bucket = static_cast<std::size_t>(f.hash & bucket_mask);
    // Only the digest lines that hold occupied slots (occupied_, 4 bytes a bucket, stays in cache).
    const std::size_t lines = std::min<std::size_t>(kMaxDigestLines, (occupied_[bucket] + 63) / 64);
    for (std::size_t line = 0; line < lines; ++line) __builtin_prefetch(digests_.data() + bucket * bc + 64 * line);
  };
  const auto match = [&](std::size_t i) {
    InFlight& f = ring[i % kRing];
    const auto bucket = static_cast<std::size_t>(f.hash & bucket_mask);
    const std::size_t base = bucket * bc;
    const std::uint32_t occupied = occupied_[bucket];
    f.count = 0;
    for (std::uint32_t chunk = 0; chunk < occupied; chunk += 64) {
      for (std::uint64_t c = match_(digests_.data() + base + chunk, std::min(occupied - chunk, 64u), digest_of(f.hash));
           c; c &= c - 1) {
        if (f.count == kCandidates) {
          f.count = kCandidates + 1;
          return;
        }
        const std::size_t slot = base + chunk + static_cast<std::size_t>(std::countr_zero(c));
        f.candidates[f.count++] = static_cast<std::int64_t>(slot);
        __builtin_prefetch(keys_.data() + slot);
      }
    }
  };
  const auto compare = [&](std::size_t i) {
    InFlight& f = ring[i % kRing];
    f.slot = -1;
    if (f.count > kCandidates) {
      if (const Slot s = locate(keys[i]); s.index >= 0) f.slot = flat(s);
    } else {
      for (int c = 0; c < f.count; ++c)
        if (keys_[static_cast<std::size_t>(f.candidates[c])] == keys[i]) {
          f.slot = f.candidates[c];
          break;
        }
    }
    if (f.slot >= 0) {
      prefetch_lines(rows_.data() + static_cast<std::size_t>(f.slot) * row_bytes, row_bytes);
    }
  };

  // Fill the pipeline: keys [begin, begin + kDigestsAhead) enter their first stages.
  for (std::size_t i = begin; i < std::min(end, begin + kDigestsAhead); ++i) {
    prefetch_digests(i);
    if (i < begin + kKeysAhead) match(i);
    if (i < begin + kRowAhead) compare(i);
  }
  std::int64_t found = 0;
  for (std::size_t i = begin; i < end; ++i) {
    if (i + kDigestsAhead < end) prefetch_digests(i + kDigestsAhead);
    if (i + kKeysAhead < end) match(i + kKeysAhead);
    if (i + kRowAhead < end) compare(i + kRowAhead);
    const std::int64_t slot = ring[i % kRing].slot;
    founds[i] = slot >= 0;
    if (slot < 0) continue;
    ++found;
    read_row(slot, values.subspan(i * w, w));
    if (!scores.empty()) scores[i] = scores_[static_cast<std::size_t>(slot)];
  }
  return found;
}

CallStats HostTable::find(std::span<const std::uint64_t> keys, std::span<float> values, std::span<std::uint8_t> founds,
                          std::span<std::uint64_t> scores) const {
  const GroupLock lock(calls_, Access::kRead);
  check_keys(keys);
  CallStats stats;
  const int threads = std::max(1, context_.threads);
  if (threads == 1 || static_cast<std::int64_t>(keys.size()) < context_.min_keys_for_threads) {
    stats.found = find_range(keys, 0, keys.size(), values, founds, scores);
    return stats;
  }
  // Reads commute: contiguous ranges, one per thread, give the one-by-one result.
  std::int64_t found = 0;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(+ : found)
  for (int t = 0; t < threads; ++t) {
    const std::size_t begin = keys.size() * static_cast<std::size_t>(t) / static_cast<std::size_t>(threads);
    const std::size_t end = keys.size() * static_cast<std::size_t>(t + 1) / static_cast<std::size_t>(threads);
    found += find_range(keys, begin, end, values, founds, scores);
  }
  stats.found = found;
  return stats;
}

CallStats HostTable::find_and_update(std::span<const std::uint64_t> keys, std::span<float> values,
                                     std::span<std::uint8_t> founds) {
  const GroupLock lock(calls_, Access::kUpdate);
  check_keys(keys);
  const CallScores score(*this, {});
  const auto w = static_cast<std::size_t>(row_width_);
  return for_each_key(keys, [&](std::size_t i, CallStats& stats, Evicted*) {
    const Slot s = locate(keys[i]);
    founds[i] = s.index >= 0;
    if (s.index < 0) return;
    ++stats.found;
    const BucketLock bucket(*this, s.bucket);
    read_row(flat(s), values.subspan(i * w, w));
    rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
    sighted(s.bucket, keys[i]);  // the bucket's bank (and scores): under its lock
  }, nullptr, values);
}

void HostTable::contains(std::span<const std::uint64_t> keys, std::span<std::uint8_t> founds) const {
  const GroupLock lock(calls_, Access::kRead);
  check_keys(keys);
  for_each_key(keys, [&](std::size_t i, CallStats&, Evicted*) { founds[i] = locate(keys[i]).index >= 0; });
}

CallStats HostTable::upsert(std::span<const std::uint64_t> keys, std::span<const float> values,
                            std::span<const std::uint64_t> scores, Evicted* evicted) {
  check_keys(keys);
  grow_for(static_cast<std::int64_t>(keys.size()));
  const CallScores score(*this, scores);
  const auto w = static_cast<std::size_t>(row_width_);
  const CallStats stats = for_each_key(keys, [&](std::size_t i, CallStats& st, Evicted* ev) {
    Slot s = locate(keys[i]);
    if (s.index >= 0) {
      ++st.found;
      rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
      sighted(s.bucket, keys[i]);
    } else {
      s = insert_new(keys[i], [&](int estimate) { return score.fresh(i, estimate); }, st, ev);
      if (s.index < 0) return;  // refused or not admitted: the value is dropped
    }
    write_row(flat(s), values.subspan(i * w, w));
  }, evicted, values);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats HostTable::insert_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                                      std::span<const std::uint64_t> scores) {
  const GroupLock lock(calls_, Access::kExclusive);
  return upsert(keys, values, scores, nullptr);
}

CallStats HostTable::insert_and_evict(std::span<const std::uint64_t> keys, std::span<const float> values,
                                      std::span<const std::uint64_t> scores, Evicted& evicted) {
  const GroupLock lock(calls_, Access::kExclusive);
  return upsert(keys, values, scores, &evicted);
}

CallStats HostTable::find_or_insert(std::span<const std::uint64_t> keys, std::span<float> values,
                                    std::span<std::uint8_t> founds, std::span<const std::uint64_t> scores,
                                    Evicted* evicted) {
  const GroupLock lock(calls_, Access::kExclusive);
  check_keys(keys);
  const auto w = static_cast<std::size_t>(row_width_);
  if (!options_.training) {  // evaluation: read, never insert, never touch a score
    return for_each_key(keys, [&](std::size_t i, CallStats& stats, Evicted*) {
      const Slot s = locate(keys[i]);
      if (!founds.empty()) founds[i] = s.index >= 0;
      if (s.index >= 0) {
        ++stats.found;
        read_row(flat(s), values.subspan(i * w, w));
      } else {
        initial_row(options_.eval_initializer, options_.seed, options_.num_embeddings, keys[i], options_.dim,
                    values.subspan(i * w, w));
      }
    }, nullptr, values);
  }
  grow_for(static_cast<std::int64_t>(keys.size()));
  const CallScores score(*this, scores);
  const CallStats stats = for_each_key(keys, [&](std::size_t i, CallStats& st, Evicted* ev) {
    const auto row = values.subspan(i * w, w);
    Slot s = locate(keys[i]);
    if (!founds.empty()) founds[i] = s.index >= 0;
    if (s.index >= 0) {
      ++st.found;
      rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
      sighted(s.bucket, keys[i]);
      read_row(flat(s), row);
      return;
    }
    s = insert_new(keys[i], [&](int estimate) { return score.fresh(i, estimate); }, st, ev);
    if (s.index == kNotAdmittedIndex) {  // not stored: the initializer's row as computed
      initial_row(options_.initializer, options_.seed, options_.num_embeddings, keys[i], options_.dim, row);
      return;
    }
    if (s.index < 0) {
      std::fill(row.begin(), row.end(), 0.0f);  // refused: reads as zeros (SafeCheck)
      return;
    }
    initial_row(options_.initializer, options_.seed, options_.num_embeddings, keys[i], options_.dim, row);
    write_row(flat(s), row);
    read_row(flat(s), row);  // what is stored (fp16/bf16 round the initial values)
  }, evicted, values);
  size_ += stats.inserted - stats.evicted;
  if (stats.refused > 0 && options_.safe_check == SafeCheck::kWarning)
    std::cerr << "embscale: warning: find_or_insert could not insert " << stats.refused << " of " << keys.size()
              << " keys (full buckets of higher scores); their rows read as zeros\n";
  if (stats.refused > 0 && options_.safe_check == SafeCheck::kError)
    throw Error("find_or_insert could not insert " + std::to_string(stats.refused) + " of " +
                std::to_string(keys.size()) + " keys (full buckets of higher scores; safe_check_mode ERROR): "
                "raise the capacity or the bucket capacity");
  return stats;
}

CallStats HostTable::assign(std::span<const std::uint64_t> keys, std::span<const float> values) {
  const GroupLock lock(calls_, Access::kUpdate);
  check_keys(keys);
  const auto w = static_cast<std::size_t>(row_width_);
  return for_each_key(keys, [&](std::size_t i, CallStats& stats, Evicted*) {
    const Slot s = locate(keys[i]);
    if (s.index < 0) return;
    ++stats.found;
    const BucketLock bucket(*this, s.bucket);
    write_row(flat(s), values.subspan(i * w, w));
  }, nullptr, values);
}

CallStats HostTable::assign_scores(std::span<const std::uint64_t> keys, std::span<const std::uint64_t> scores) {
  const GroupLock lock(calls_, Access::kUpdate);
  check_keys(keys);
  const CallScores score(*this, scores);
  return for_each_key(keys, [&](std::size_t i, CallStats& stats, Evicted*) {
    const Slot s = locate(keys[i]);
    if (s.index < 0) return;
    ++stats.found;
    const BucketLock bucket(*this, s.bucket);
    rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
    sighted(s.bucket, keys[i]);  // the bucket's bank (and scores): under its lock
  });
}

CallStats HostTable::accum_or_assign(std::span<const std::uint64_t> keys, std::span<const float> values,
                                     std::span<const std::uint8_t> accumulate, std::span<const std::uint64_t> scores) {
  const GroupLock lock(calls_, Access::kExclusive);
  check_keys(keys);
  grow_for(static_cast<std::int64_t>(std::count(accumulate.begin(), accumulate.end(), std::uint8_t{0})));
  const CallScores score(*this, scores);
  const auto w = static_cast<std::size_t>(row_width_);
  const CallStats stats = for_each_key(keys, [&](std::size_t i, CallStats& st, Evicted*) {
    Slot s = locate(keys[i]);
    if (s.index >= 0) {
      ++st.found;
      if (!accumulate[i]) return;
      rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
      sighted(s.bucket, keys[i]);
      add_to_row(flat(s), values.subspan(i * w, w));
    } else if (!accumulate[i]) {
      s = insert_new(keys[i], [&](int estimate) { return score.fresh(i, estimate); }, st, nullptr);
      if (s.index >= 0) write_row(flat(s), values.subspan(i * w, w));
    }
  }, nullptr, values);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats HostTable::restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores, Evicted* evicted) {
  const GroupLock lock(calls_, Access::kExclusive);
  check_keys(keys);
  grow_for(static_cast<std::int64_t>(keys.size()));
  const auto w = static_cast<std::size_t>(row_width_);
  const CallStats stats = for_each_key(keys, [&](std::size_t i, CallStats& st, Evicted* ev) {
    Slot s = locate(keys[i]);
    if (s.index >= 0) {
      ++st.found;
      rescore(s, scores[i]);
    } else {
      s = insert_new(keys[i], [&](int) { return scores[i]; }, st, ev, /*filtered=*/false);  // put back: no filter
      if (s.index < 0) return;
    }
    write_row(flat(s), values.subspan(i * w, w));
  }, evicted, values);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats HostTable::erase(std::span<const std::uint64_t> keys) {
  const GroupLock lock(calls_, Access::kExclusive);
  check_keys(keys);
  const CallStats stats = for_each_key(keys, [&](std::size_t i, CallStats& st, Evicted*) {
    const Slot s = locate(keys[i]);
    if (s.index < 0) return;
    ++st.found;
    remove(s);
  });
  size_ -= stats.found;
  return stats;
}

std::int64_t HostTable::erase_if(const std::function<bool(std::uint64_t, std::uint64_t)>& predicate) {
  const GroupLock lock(calls_, Access::kExclusive);
  std::int64_t erased = 0;
  for (std::int64_t b = 0; b < buckets_; ++b)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(occupied_[static_cast<std::size_t>(b)]);) {
      const auto slot = static_cast<std::size_t>(b * bucket_capacity_ + i);
      if (predicate(keys_[slot], scores_[slot])) {
        remove({b, i});  // the last entry moves here: look at slot i again
        ++erased;
        --size_;
      } else {
        ++i;
      }
    }
  return erased;
}

std::int64_t HostTable::export_batch(std::int64_t offset, std::int64_t count, std::vector<std::uint64_t>& keys,
                                     std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  const GroupLock lock(calls_, Access::kRead);
  keys.clear();
  values.clear();
  scores.clear();
  const std::int64_t end = std::min(offset + count, slots());
  for (std::int64_t slot = std::max<std::int64_t>(offset, 0); slot < end; ++slot) {
    const std::int64_t b = slot / bucket_capacity_;
    if (slot % bucket_capacity_ >= static_cast<std::int64_t>(occupied_[static_cast<std::size_t>(b)])) continue;
    keys.push_back(keys_[static_cast<std::size_t>(slot)]);
    scores.push_back(scores_[static_cast<std::size_t>(slot)]);
    values.resize(values.size() + static_cast<std::size_t>(row_width_));
    read_row(slot, std::span<float>(values).last(static_cast<std::size_t>(row_width_)));
  }
  return static_cast<std::int64_t>(keys.size());
}

std::int64_t HostTable::export_batch_if(std::uint64_t threshold, std::vector<std::uint64_t>& keys,
                                        std::vector<float>& values, std::vector<std::uint64_t>& scores) const {
  const GroupLock lock(calls_, Access::kRead);
  keys.clear();
  values.clear();
  scores.clear();
  for (std::int64_t b = 0; b < buckets_; ++b)
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(occupied_[static_cast<std::size_t>(b)]); ++i) {
      const std::int64_t slot = b * bucket_capacity_ + i;
      if (scores_[static_cast<std::size_t>(slot)] < threshold) continue;
      keys.push_back(keys_[static_cast<std::size_t>(slot)]);
      scores.push_back(scores_[static_cast<std::size_t>(slot)]);
      values.resize(values.size() + static_cast<std::size_t>(row_width_));
      read_row(slot, std::span<float>(values).last(static_cast<std::size_t>(row_width_)));
    }
  return static_cast<std::int64_t>(keys.size());
}

}  // namespace embscale::kv

namespace embscale::kv {

// Added for dump/load (kv/table_file.hpp); reads only, like export_batch_if.
std::int64_t HostTable::export_stored(std::uint64_t threshold, std::int64_t chunk_entries,
                                      const std::function<void(const ExportSummary&)>& begin,
                                      const std::function<void(const StoredEntries&)>& chunk) const {
  EMBSCALE_EXPECTS(chunk_entries >= 1, "export_stored: chunk_entries must be >= 1");
  const GroupLock lock(calls_, Access::kRead);
  ExportSummary summary;
  for (std::int64_t b = 0; b < buckets_; ++b) {
    const auto base = static_cast<std::size_t>(b * bucket_capacity_);
    for (std::uint32_t i = 0; i < occupied_[static_cast<std::size_t>(b)]; ++i) {
      const std::uint64_t score = scores_[base + i];
      if (score < threshold) continue;
      ++summary.count;
      summary.max_score = std::max(summary.max_score, score);
    }
  }
  summary.score_now = get_score();
  begin(summary);
  const std::int64_t count = summary.count;
  const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
  const auto cap = static_cast<std::size_t>(std::min(chunk_entries, std::max<std::int64_t>(count, 1)));
  std::vector<std::uint64_t> keys;
  std::vector<std::uint64_t> scores;
  std::vector<std::byte> rows;
  keys.reserve(cap);
  scores.reserve(cap);
  rows.reserve(cap * row_bytes);
  const auto flush = [&] {
    chunk({keys, scores, rows});
    keys.clear();
    scores.clear();
    rows.clear();
  };
  for (std::int64_t b = 0; b < buckets_; ++b) {
    const auto base = static_cast<std::size_t>(b * bucket_capacity_);
    for (std::uint32_t i = 0; i < occupied_[static_cast<std::size_t>(b)]; ++i) {
      const std::size_t slot = base + i;
      if (scores_[slot] < threshold) continue;
      keys.push_back(keys_[slot]);
      scores.push_back(scores_[slot]);
      const std::byte* row = rows_.data() + slot * row_bytes;
      rows.insert(rows.end(), row, row + row_bytes);
      if (keys.size() == cap) flush();
    }
  }
  if (!keys.empty()) flush();
  return count;
}

}  // namespace embscale::kv
