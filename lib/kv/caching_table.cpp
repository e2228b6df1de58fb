#include "kv/caching_table.hpp"

#include <algorithm>

#include "core/error.hpp"
#include "kv/initializer.hpp"
#include "kv/score_rules.hpp"
#include "kv/tier_batch.hpp"

namespace embscale::kv {

CachingTable::CachingTable(TableOptions fast_options, std::unique_ptr<Storage> slow)
    : fast_(std::move(fast_options)), slow_(std::move(slow)) {
  EMBSCALE_EXPECTS(slow_ != nullptr, "a caching table needs a slow tier");
  if (slow_->row_width() != fast_.row_width())
    throw InputError("caching table: the slow tier " + slow_->describe() + " stores rows of " +
                     std::to_string(slow_->row_width()) + " values, the fast tier " +
                     std::to_string(fast_.row_width()));
}

void CachingTable::demote(const Evicted& evicted) {
  if (evicted.keys.empty()) return;
  // A key evicted by an earlier key of the same call and inserted again by its own later
  // occurrence is back in the fast tier: its evicted version is stale and stays out.
  std::vector<std::uint8_t> back_in_fast(evicted.size());
  fast_.contains(evicted.keys, back_in_fast);
  const auto w = static_cast<std::size_t>(row_width());
  Evicted out;
  for (std::size_t j = 0; j < evicted.size(); ++j) {
    if (back_in_fast[j]) continue;
    out.keys.push_back(evicted.keys[j]);
    out.scores.push_back(evicted.scores[j]);
    out.values.insert(out.values.end(), evicted.values.begin() + static_cast<long>(j * w),
                      evicted.values.begin() + static_cast<long>((j + 1) * w));
  }
  counters_.demoted += static_cast<std::int64_t>(out.size());
  counters_.slow_dropped += slow_->insert(out.keys, out.values, out.scores);
}

void CachingTable::write_refused_to_slow(SubBatch& batch, std::uint64_t call_score) {
  // A new key the fast tier refused (its bucket holds only higher scores) or did not admit (its
  // admission filter) keeps its initial row in the slow tier, and the caller reads that row
  // rather than zeros.
  const auto w = static_cast<std::size_t>(row_width());
  std::vector<std::uint8_t> in_fast(batch.size());
  fast_.contains(batch.keys, in_fast);
  const TableOptions& o = fast_.options();
  Evicted refused;
  for (std::size_t j = 0; j < batch.size(); ++j) {
    if (in_fast[j]) continue;
    const auto row = std::span<float>(batch.rows).subspan(j * w, w);
    initial_row(o.initializer, o.seed, o.num_embeddings, batch.keys[j], o.dim, row);
    refused.keys.push_back(batch.keys[j]);
    refused.values.insert(refused.values.end(), row.begin(), row.end());
    refused.scores.push_back(call_score);
  }
  counters_.slow_writes += static_cast<std::int64_t>(refused.size());
  counters_.slow_dropped += slow_->insert(refused.keys, refused.values, refused.scores);
}

CallStats CachingTable::find(std::span<const std::uint64_t> keys, std::span<float> values,
                             std::span<std::uint8_t> founds, std::span<std::uint64_t> scores) const {
  CallStats stats = fast_.find(keys, values, founds, scores);
  SubBatch missed;
  for (std::size_t i = 0; i < keys.size(); ++i)
    if (!founds[i]) missed.add(static_cast<std::uint32_t>(i), keys[i]);
  if (missed.size() == 0) return stats;
  const auto w = static_cast<std::size_t>(row_width());
  missed.rows.resize(missed.size() * w);
  std::vector<std::uint8_t> slow_found(missed.size());
  std::vector<std::uint64_t> slow_scores(missed.size());
  slow_->find(missed.keys, missed.rows, slow_found, slow_scores);
  missed.scatter_rows(values, w, slow_found);
  for (std::size_t j = 0; j < missed.size(); ++j) {
    if (!slow_found[j]) continue;
    founds[missed.positions[j]] = 1;
    if (!scores.empty()) scores[missed.positions[j]] = slow_scores[j];
    ++stats.found;
  }
  return stats;
}

CallStats CachingTable::find_or_insert(std::span<const std::uint64_t> batch_keys, std::span<float> values,
                                       std::span<std::uint8_t> founds) {
  const auto w = static_cast<std::size_t>(row_width());
  const DistinctKeys distinct = distinct_keys(batch_keys, /*keep_last=*/false);
  const std::span<const std::uint64_t> keys(distinct.keys);
  const std::size_t n = keys.size();

  // 1. Where each key is now: the fast tier, else perhaps the slow one.
  std::vector<std::uint8_t> in_fast(n), in_slow(n, 0), was_present(n);
  fast_.contains(keys, in_fast);
  SubBatch slow_side;
  for (std::size_t j = 0; j < n; ++j)
    if (!in_fast[j]) slow_side.add(static_cast<std::uint32_t>(j), keys[j]);
  std::vector<std::uint8_t> slow_found(slow_side.size());
  std::vector<std::uint64_t> slow_scores(slow_side.size());
  slow_side.rows.resize(slow_side.size() * w);
  if (slow_side.size() > 0) slow_->find(slow_side.keys, slow_side.rows, slow_found, slow_scores);
  for (std::size_t j = 0; j < slow_side.size(); ++j) in_slow[slow_side.positions[j]] = slow_found[j];
  for (std::size_t j = 0; j < n; ++j) was_present[j] = in_fast[j] || in_slow[j];

  // 2. Promote the slow hits with their scores. Entries the fast tier evicts to make room (keys of
  //    this batch among them) are demoted after the promoted ones left the slow tier.
  SubBatch promote;
  std::vector<std::uint64_t> promote_scores;
  for (std::size_t j = 0; j < slow_side.size(); ++j)
    if (slow_found[j]) {
      promote.add(slow_side.positions[j], slow_side.keys[j]);
      promote.rows.insert(promote.rows.end(), slow_side.rows.begin() + static_cast<long>(j * w),
                          slow_side.rows.begin() + static_cast<long>((j + 1) * w));
      promote_scores.push_back(slow_scores[j]);
    }
  counters_.slow_hits += static_cast<std::int64_t>(promote.size());
  if (promote.size() > 0) {
    Evicted evicted;
    fast_.restore(promote.keys, promote.rows, promote_scores, &evicted);
    std::vector<std::uint8_t> now_fast(promote.size());
    fast_.contains(promote.keys, now_fast);
    std::vector<std::uint64_t> moved;
    for (std::size_t j = 0; j < promote.size(); ++j)
      if (now_fast[j]) moved.push_back(promote.keys[j]);
    counters_.promoted += static_cast<std::int64_t>(moved.size());
    slow_->erase(moved);
    demote(evicted);
  }

  // 3. Present keys now in the fast tier are touched and read first, then new keys are inserted
  //    with the initializer: in this order an insertion's eviction can never turn a present
  //    key of the batch into a miss. Present keys now in the slow tier (a refused promotion, or
  //    demoted by step 2) are read from there.
  std::vector<std::uint8_t> now_fast(n);
  fast_.contains(keys, now_fast);
  SubBatch hits, fresh, from_slow;
  for (std::size_t j = 0; j < n; ++j) {
    if (now_fast[j]) hits.add(static_cast<std::uint32_t>(j), keys[j]);
    else if (was_present[j]) from_slow.add(static_cast<std::uint32_t>(j), keys[j]);
    else fresh.add(static_cast<std::uint32_t>(j), keys[j]);
  }
  std::vector<float> rows(n * w);
  CallStats stats;
  if (hits.size() > 0) {
    hits.rows.resize(hits.size() * w);
    std::vector<std::uint8_t> found(hits.size());
    stats += fast_.find_and_update(hits.keys, hits.rows, found);
    hits.scatter_rows(rows, w);
  }
  if (fresh.size() > 0) {
    fresh.rows.resize(fresh.size() * w);
    std::vector<std::uint8_t> found(fresh.size());
    Evicted evicted;
    const std::uint64_t call_score = fast_.get_score();  // what a refused new key would have had
    const CallStats inserted = fast_.find_or_insert(fresh.keys, fresh.rows, found, {}, &evicted);
    stats += inserted;
    demote(evicted);
    if (inserted.refused + inserted.not_admitted > 0) write_refused_to_slow(fresh, call_score);
    fresh.scatter_rows(rows, w);
  }
  if (from_slow.size() > 0) {
    from_slow.rows.resize(from_slow.size() * w);
    std::vector<std::uint8_t> found(from_slow.size());
    slow_->find(from_slow.keys, from_slow.rows, found, {});
    from_slow.scatter_rows(rows, w);
    stats.found += static_cast<std::int64_t>(from_slow.size());
  }

  // Back to the batch: a repeated key reads its row again and counts as present.
  for (std::size_t i = 0; i < batch_keys.size(); ++i) {
    const std::uint32_t j = distinct.slot_of[i];
    std::copy_n(rows.begin() + static_cast<long>(j * w), w, values.begin() + static_cast<long>(i * w));
    if (!founds.empty()) founds[i] = was_present[j] || distinct.source[j] != i;
  }
  return stats;
}

CallStats CachingTable::insert_or_assign(std::span<const std::uint64_t> batch_keys, std::span<const float> values,
                                         std::span<const std::uint64_t> scores) {
  // Distinct keys, each with its last row (the last write wins, as one key at a time would give).
  const DistinctKeys distinct = distinct_keys(batch_keys, /*keep_last=*/true);
  SubBatch writes;
  std::vector<std::uint64_t> write_scores;
  const bool custom = takes_caller_scores(score_rules(fast_.options().score_strategy)) && !scores.empty();
  for (std::size_t j = 0; j < distinct.size(); ++j) {
    writes.add(distinct.source[j], distinct.keys[j]);
    if (custom) write_scores.push_back(scores[distinct.source[j]]);
  }
  const auto w = static_cast<std::size_t>(row_width());
  writes.gather_rows(values, w);
  const std::uint64_t call_score = fast_.get_score();  // what a refused new key would have had
  slow_->erase(writes.keys);  // the new rows live in the fast tier (or return to the slow one below)
  // Keys present in the fast tier first (updated in place, no eviction), then new ones: so an
  // insertion's eviction never turns a present key of the batch into a new one.
  std::vector<std::uint8_t> present(writes.size());
  fast_.contains(writes.keys, present);
  CallStats stats;
  Evicted evicted;
  for (const int pass : {1, 0}) {
    SubBatch part;
    std::vector<std::uint64_t> part_scores;
    for (std::size_t j = 0; j < writes.size(); ++j)
      if (present[j] == pass) {
        part.add(static_cast<std::uint32_t>(j), writes.keys[j]);
        if (custom) part_scores.push_back(write_scores[j]);
      }
    if (part.size() == 0) continue;
    part.gather_rows(writes.rows, w);
    stats += fast_.insert_and_evict(part.keys, part.rows, part_scores, evicted);
  }
  demote(evicted);
  if (stats.refused + stats.not_admitted > 0) {
    std::vector<std::uint8_t> in_fast(writes.size());
    fast_.contains(writes.keys, in_fast);
    Evicted refused;
    for (std::size_t j = 0; j < writes.size(); ++j) {
      if (in_fast[j]) continue;
      refused.keys.push_back(writes.keys[j]);
      refused.values.insert(refused.values.end(), writes.rows.begin() + static_cast<long>(j * w),
                            writes.rows.begin() + static_cast<long>((j + 1) * w));
      refused.scores.push_back(custom ? write_scores[j] : call_score);
    }
    counters_.slow_writes += static_cast<std::int64_t>(refused.size());
    counters_.slow_dropped += slow_->insert(refused.keys, refused.values, refused.scores);
  }
  return stats;
}

CallStats CachingTable::erase(std::span<const std::uint64_t> keys) {
  CallStats stats = fast_.erase(keys);
  stats.found += slow_->erase(keys);
  return stats;
}

CallStats CachingTable::restore(std::span<const std::uint64_t> keys, std::span<const float> values,
                                std::span<const std::uint64_t> scores) {
  const auto w = static_cast<std::size_t>(row_width());
  EMBSCALE_EXPECTS(values.size() == keys.size() * w && scores.size() == keys.size(), "a row and a score per key");
  std::vector<std::uint8_t> in_fast(keys.size());
  fast_.contains(keys, in_fast);
  const std::int64_t was_slow = slow_->erase(keys);  // a key lives in one tier: the entry's copy wins
  const std::int64_t dropped_before = counters_.slow_dropped;
  Evicted evicted;
  CallStats stats = fast_.restore(keys, values, scores, &evicted);
  demote(evicted);
  // Entries the fast tier refused (not there now, and not demoted: those were placed, then evicted).
  std::vector<std::uint8_t> now_fast(keys.size());
  fast_.contains(keys, now_fast);
  std::vector<std::uint64_t> demoted(evicted.keys.begin(), evicted.keys.end());
  std::sort(demoted.begin(), demoted.end());
  Evicted refused;
  for (std::size_t j = 0; j < keys.size(); ++j) {
    if (now_fast[j] || std::binary_search(demoted.begin(), demoted.end(), keys[j])) continue;
    refused.keys.push_back(keys[j]);
    refused.scores.push_back(scores[j]);
    refused.values.insert(refused.values.end(), values.begin() + static_cast<long>(j * w),
                          values.begin() + static_cast<long>((j + 1) * w));
  }
  counters_.slow_writes += static_cast<std::int64_t>(refused.size());
  counters_.slow_dropped += slow_->insert(refused.keys, refused.values, refused.scores);
  stats.found = std::count(in_fast.begin(), in_fast.end(), std::uint8_t{1}) + was_slow;
  stats.inserted = static_cast<std::int64_t>(keys.size()) - stats.found;
  stats.refused = 0;  // refused by the fast tier, kept by the slow one (or counted in evicted)
  stats.evicted = counters_.slow_dropped - dropped_before;
  return stats;
}

void CachingTable::for_each_entry(const EntryVisitor& visit) const {
  for_each_entry_of(fast_, visit);
  slow_->for_each(visit);
}

}  // namespace embscale::kv
