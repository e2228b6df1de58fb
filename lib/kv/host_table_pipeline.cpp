// HostTable's loops over a call's keys: the prefetch stages ahead of each key, the threaded loop
// by bucket groups that keeps "as if one key at a time in input order" (for_each_key), and the
// rolling software pipeline of find (find_range).
#include <algorithm>
#include <bit>
#include <utility>
#include <vector>

#include "core/hash.hpp"
#include "kv/bucket_partition.hpp"
#include "kv/host_table.hpp"
#include "kv/host_table_detail.hpp"

namespace embscale::kv {

using host_table_detail::digest_of;
using host_table_detail::prefetch_lines;
using host_table_detail::prefetch_lines_to_write;

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
  if (candidates > 0) return;                                     // most likely present: prefetch_present_row follows
  if (occupied < static_cast<std::uint32_t>(bucket_capacity_)) {  // the free slot a new key takes
    const std::size_t slot = base + occupied;
    __builtin_prefetch(keys_.data() + slot, 1);
    __builtin_prefetch(scores_.data() + slot, 1);
    const std::size_t row_bytes = static_cast<std::size_t>(row_width_) * value_bytes(options_.value_type);
    prefetch_lines_to_write(rows_.data() + slot * row_bytes, row_bytes);
  } else {  // a full bucket: the scores the victim search reads
    for (std::size_t at = 0; at < static_cast<std::size_t>(bucket_capacity_); at += 8)
      __builtin_prefetch(scores_.data() + base + at);
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
#pragma omp parallel for schedule(dynamic, 1) num_threads(static_cast <int>(threads))
  for (std::size_t g = 0; g < groups; ++g) {
    Evicted* mine = evicted ? &group_evicted[g] : nullptr;
    for (std::size_t at = partition.starts[g]; at < partition.starts[g + 1]; ++at) {
      if (at + kPrefetchAhead < partition.starts[g + 1]) prefetch_bucket(keys[partition.order[at + kPrefetchAhead]]);
      if (at + kPrefetchAhead / 2 < partition.starts[g + 1])
        prefetch_slot(keys[partition.order[at + kPrefetchAhead / 2]]);
      if (at + kPrefetchAhead / 4 < partition.starts[g + 1]) {
        const std::uint32_t ahead = partition.order[at + kPrefetchAhead / 4];
        prefetch_present_row(keys[ahead]);
        // The call's row of that key: in bucket-group order, rows are read out of input order.
        if (!rows.empty())
          prefetch_lines(rows.data() + static_cast<std::size_t>(ahead) * static_cast<std::size_t>(row_width_),
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

}  // namespace embscale::kv
