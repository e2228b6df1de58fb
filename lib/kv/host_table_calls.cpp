// HostTable's batched calls (find, find_or_insert, insert_or_assign, accum_or_assign, erase, ...):
// each takes its group lock, reads its call score once (CallScores), and runs its keys through
// for_each_key; a new key goes through insert_new (admission, a free slot or the bucket's victim).
#include <algorithm>
#include <iostream>
#include <optional>

#include "core/error.hpp"
#include "core/hash.hpp"
#include "kv/host_table.hpp"
#include "kv/host_table_detail.hpp"
#include "kv/initializer.hpp"
#include "kv/row_codec.hpp"
#include "kv/score_rules.hpp"
#include "kv/victim_search.hpp"

namespace embscale::kv {

using host_table_detail::digest_of;

// The scores one score-setting call gives, by its strategy's rules (kv/score_rules.hpp): the
// epoch, the clock and the step are read once per call; `custom` holds the caller's scores, one
// per key, or is empty.
class HostTable::CallScores {
 public:
  CallScores(HostTable& table, std::span<const std::uint64_t> custom)
      : rules_(score_rules(table.options_.score_strategy)), custom_(custom),
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
      while (flag_.load(std::memory_order_relaxed)) {}
  }
  ~BucketLock() { flag_.store(0, std::memory_order_release); }
  BucketLock(const BucketLock&) = delete;
  BucketLock& operator=(const BucketLock&) = delete;

 private:
  std::atomic<std::uint8_t>& flag_;
};

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
      scan_shortlist_(scores_.data() + base, keys_.data() + base, static_cast<std::uint32_t>(bucket_capacity_),
                      shortlist);
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
  return for_each_key(
      keys,
      [&](std::size_t i, CallStats& stats, Evicted*) {
        const Slot s = locate(keys[i]);
        founds[i] = s.index >= 0;
        if (s.index < 0) return;
        ++stats.found;
        const BucketLock bucket(*this, s.bucket);
        read_row(flat(s), values.subspan(i * w, w));
        rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
        sighted(s.bucket, keys[i]);  // the bucket's bank (and scores): under its lock
      },
      nullptr, values);
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
  const CallStats stats = for_each_key(
      keys,
      [&](std::size_t i, CallStats& st, Evicted* ev) {
        Slot s = locate(keys[i]);
        if (s.index >= 0) {
          ++st.found;
          rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
          sighted(s.bucket, keys[i]);
        } else {
          s = insert_new(
              keys[i], [&](int estimate) { return score.fresh(i, estimate); }, st, ev);
          if (s.index < 0) return;  // refused or not admitted: the value is dropped
        }
        write_row(flat(s), values.subspan(i * w, w));
      },
      evicted, values);
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
    return for_each_key(
        keys,
        [&](std::size_t i, CallStats& stats, Evicted*) {
          const Slot s = locate(keys[i]);
          if (!founds.empty()) founds[i] = s.index >= 0;
          if (s.index >= 0) {
            ++stats.found;
            read_row(flat(s), values.subspan(i * w, w));
          } else {
            initial_row(options_.eval_initializer, options_.seed, options_.num_embeddings, keys[i], options_.dim,
                        values.subspan(i * w, w));
          }
        },
        nullptr, values);
  }
  grow_for(static_cast<std::int64_t>(keys.size()));
  const CallScores score(*this, scores);
  const CallStats stats = for_each_key(
      keys,
      [&](std::size_t i, CallStats& st, Evicted* ev) {
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
        s = insert_new(
            keys[i], [&](int estimate) { return score.fresh(i, estimate); }, st, ev);
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
      },
      evicted, values);
  size_ += stats.inserted - stats.evicted;
  check_refusals(options_, stats.refused, keys.size());
  return stats;
}

CallStats HostTable::assign(std::span<const std::uint64_t> keys, std::span<const float> values) {
  const GroupLock lock(calls_, Access::kUpdate);
  check_keys(keys);
  const auto w = static_cast<std::size_t>(row_width_);
  return for_each_key(
      keys,
      [&](std::size_t i, CallStats& stats, Evicted*) {
        const Slot s = locate(keys[i]);
        if (s.index < 0) return;
        ++stats.found;
        const BucketLock bucket(*this, s.bucket);
        write_row(flat(s), values.subspan(i * w, w));
      },
      nullptr, values);
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
  const CallStats stats = for_each_key(
      keys,
      [&](std::size_t i, CallStats& st, Evicted*) {
        Slot s = locate(keys[i]);
        if (s.index >= 0) {
          ++st.found;
          if (!accumulate[i]) return;
          rescore(s, score.touched(i, scores_[static_cast<std::size_t>(flat(s))]));
          sighted(s.bucket, keys[i]);
          add_to_row(flat(s), values.subspan(i * w, w));
        } else if (!accumulate[i]) {
          s = insert_new(
              keys[i], [&](int estimate) { return score.fresh(i, estimate); }, st, nullptr);
          if (s.index >= 0) write_row(flat(s), values.subspan(i * w, w));
        }
      },
      nullptr, values);
  size_ += stats.inserted - stats.evicted;
  return stats;
}

CallStats HostTable::restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                             std::span<const std::uint64_t> scores, Evicted* evicted) {
  const GroupLock lock(calls_, Access::kExclusive);
  check_keys(keys);
  grow_for(static_cast<std::int64_t>(keys.size()));
  const auto w = static_cast<std::size_t>(row_width_);
  const CallStats stats = for_each_key(
      keys,
      [&](std::size_t i, CallStats& st, Evicted* ev) {
        Slot s = locate(keys[i]);
        if (s.index >= 0) {
          ++st.found;
          rescore(s, scores[i]);
        } else {
          s = insert_new(
              keys[i], [&](int) { return scores[i]; }, st, ev, /*filtered=*/false);  // put back: no filter
          if (s.index < 0) return;
        }
        write_row(flat(s), values.subspan(i * w, w));
      },
      evicted, values);
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

}  // namespace embscale::kv
