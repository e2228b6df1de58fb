#include "workloads/trace_stats.hpp"

#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "core/error.hpp"
#include "workloads/share_rank.hpp"

namespace embscale::workloads {
namespace {

// Sorts `counts` hottest first and fills the top shares and the Zipf fit over `ranks` ranks
// (0: the distinct keys seen).
void fill_key_figures(std::vector<std::int64_t>& counts, std::int64_t ranks, KeyStats& stats) {
  std::sort(counts.begin(), counts.end(), std::greater<>());
  stats.unique_keys = static_cast<std::int64_t>(counts.size());
  for (std::size_t i = 0; i < kTopPerMille.size(); ++i) {
    const std::int64_t keys = ceil_per_mille(stats.unique_keys, kTopPerMille[i]);
    std::int64_t hot = 0;
    for (std::int64_t k = 0; k < keys; ++k) hot += counts[static_cast<std::size_t>(k)];
    stats.top_keys[i] = keys;
    stats.top_share[i] = stats.accesses == 0 ? 0.0 : static_cast<double>(hot) / static_cast<double>(stats.accesses);
  }
  if (ranks == 0) ranks = stats.unique_keys;
  if (ranks >= 1) stats.zipf = fit_zipf(counts, ranks);
}

}  // namespace

TraceStatsCollector::TraceStatsCollector(TraceStatsOptions options) : options_(std::move(options)) {
  for (std::size_t j = 0; j < options_.slot_size_array.size(); ++j)
    if (options_.slot_size_array[j] < 1)
      throw InputError("trace stats: slot_size_array[" + std::to_string(j) + "] must be >= 1, got " +
                       std::to_string(options_.slot_size_array[j]));
}

void TraceStatsCollector::add(const Batch& batch) {
  validate_batch(batch);
  if (num_slots_ < 0) {
    if (!options_.slot_size_array.empty() &&
        options_.slot_size_array.size() != static_cast<std::size_t>(batch.num_slots))
      throw InputError("trace stats: slot_size_array has " + std::to_string(options_.slot_size_array.size()) +
                       " entries but the trace has " + std::to_string(batch.num_slots) + " slots");
    num_slots_ = batch.num_slots;
    slot_counters_.assign(static_cast<std::size_t>(num_slots_), SlotCounters{});
  } else if (batch.num_slots != num_slots_) {
    throw InputError("trace stats: a batch has " + std::to_string(batch.num_slots) + " slots, the first had " +
                     std::to_string(num_slots_));
  }
  records_ += batch.num_samples;
  for (std::int64_t b = 0; b < batch.num_bags(); ++b) {
    const auto slot = static_cast<std::int32_t>(b % batch.num_slots);
    const auto keys = batch.bag(b);
    SlotCounters& counters = slot_counters_[static_cast<std::size_t>(slot)];
    const auto nnz = static_cast<std::int64_t>(keys.size());
    counters.nnz_min = counters.bags == 0 ? nnz : std::min(counters.nnz_min, nnz);
    counters.nnz_max = std::max(counters.nnz_max, nnz);
    ++counters.bags;
    counters.accesses += nnz;
    for (const Key key : keys) {
      bool inserted = false;
      const std::uint32_t id = index_.find_or_insert(key, inserted);
      if (inserted) {
        count_.push_back(0);
        slot_.push_back(slot);
      } else if (slot_[id] != slot) {
        throw InputError("trace stats: key " + std::to_string(key) + " appears in slot " + std::to_string(slot) +
                         " after slot " + std::to_string(slot_[id]) +
                         " (keys must be unified-encoded: each key belongs to one slot)");
      }
      ++count_[id];
      if (options_.reuse_distances) reuse_.access(id);
    }
  }
}

TraceStats TraceStatsCollector::finish() const {
  TraceStats stats;
  const auto slots = static_cast<std::size_t>(std::max(num_slots_, 0));
  std::vector<std::vector<std::int64_t>> slot_counts(slots);
  for (std::size_t id = 0; id < count_.size(); ++id)
    slot_counts[static_cast<std::size_t>(slot_[id])].push_back(count_[id]);

  stats.slots.resize(slots);
  KeyStats& total = stats.total;
  total.records = records_;
  double total_nnz = 0;
  std::int64_t total_ranks = 0;
  for (std::size_t j = 0; j < slots; ++j) {
    const SlotCounters& counters = slot_counters_[j];
    KeyStats& slot = stats.slots[j];
    slot.records = records_;
    slot.accesses = counters.accesses;
    slot.bags = counters.bags;
    slot.bag_nnz_min = counters.nnz_min;
    slot.bag_nnz_max = counters.nnz_max;
    slot.bag_nnz_mean =
        counters.bags == 0 ? 0.0 : static_cast<double>(counters.accesses) / static_cast<double>(counters.bags);
    std::int64_t ranks = 0;
    if (!options_.slot_size_array.empty()) {
      ranks = options_.slot_size_array[j];
      if (ranks < static_cast<std::int64_t>(slot_counts[j].size()))
        throw InputError("trace stats: slot " + std::to_string(j) + " has " + std::to_string(slot_counts[j].size()) +
                         " distinct keys but slot_size_array gives it " + std::to_string(ranks));
      total_ranks += ranks;
    }
    fill_key_figures(slot_counts[j], ranks, slot);

    total.accesses += slot.accesses;
    total.bag_nnz_min = total.bags == 0 ? slot.bag_nnz_min : std::min(total.bag_nnz_min, slot.bag_nnz_min);
    total.bag_nnz_max = std::max(total.bag_nnz_max, slot.bag_nnz_max);
    total.bags += slot.bags;
    total_nnz += static_cast<double>(slot.accesses);
  }
  total.bag_nnz_mean = total.bags == 0 ? 0.0 : total_nnz / static_cast<double>(total.bags);
  std::vector<std::int64_t> counts(count_);
  fill_key_figures(counts, total_ranks, total);
  if (options_.reuse_distances) stats.reuse = reuse_.summarize();
  return stats;
}

}  // namespace embscale::workloads
